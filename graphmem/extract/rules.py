"""The rules extractor: offline, pattern-based facts from plain English text and chat messages.

No model, no I/O: a pure, deterministic function of the episode (and, for bare corrections such as
"sorry, I meant Lyon", of ``context.previous`` / ``context.facts``). Every regular expression is
compiled at import; a typical chat message takes a few hundred microseconds.

How a message is read
---------------------
1. ``message``/``text`` episodes only (a chat message whose content is a JSON
   ``{"role", "content"}`` object or a list of them is unwrapped; assistant/system turns are
   skipped). A transcript whose every line is ``Speaker: text`` (two or more speakers, or a role
   label) is read line by line: ``user:``/``human:`` lines as ``context.speaker``,
   assistant/system lines skipped, other labels ("Bob:") as that speaker.
2. Sentences: split on ``. ! ?`` and new lines (not after "Dr.", "Inc.", "St.", initials, nor
   inside versions or paths). Questions (``?`` or a leading auxiliary/wh-word) and hypotheticals
   ("If I lived in Paris…", "Suppose…") produce nothing.
3. Leading markers are stripped: greetings ("Hi,"), fillers ("So,", "Btw"), and correction markers
   ("Actually,", "Correction:", "Sorry, I meant", "Scratch that", "Wait,") which turn the facts of
   the sentence into ``kind="correct"`` (except moves: "actually I moved to Lyon" is a new fact).
4. Time phrases are resolved against ``episode.reference_time`` and cut out of the text:
   "yesterday"/"last night" −1 day, "last week" −7 days, "last month" −30 days, "last year" −365
   days, "last Monday", "N days/weeks/months/years ago", "for N years" (start of the duration),
   "in/since 2019" (Jan 1 UTC), "in/since March 2021", "since March", "on/since 2021-03-05".
   Future phrases ("tomorrow", "next week", "in two weeks", "soon") drop the clause. Without a
   time phrase ``valid_from`` stays ``None`` (the engine uses the episode's reference time).
5. Clauses: a sentence is split at ``, ; : — and but so because while…`` only where a new clause
   starts (a pronoun, ``my``, a capitalised name followed by a verb, or a bare verb such as "and
   joined Globex", which inherits the previous clause's subject).
6. Each clause is ``SUBJECT MODIFIERS* TRIGGER OBJECT``. The subject is first person
   (I/we → ``context.speaker``), ``my <relative|pet> [Name]``, a capitalised name, or (for status
   and version facts) a determiner noun phrase ("the build"). Modifiers are auxiliaries,
   negations ("don't", "no longer", "never", "stopped", "used to" → ``negate``), modals and
   intentions ("would", "might", "want to", "going to", "'d love to" → no fact) and adverbs.
   Second-person and unresolved pronoun subjects ("you", "he", "it") produce nothing.
7. Objects are only the name span: capitalised runs for places and employers ("Osaka with my cat"
   → Osaka), otherwise up to the first preposition/conjunction/filler; trailing "now", "these days",
   "again", "anymore"… and punctuation are stripped; pronouns and objects over six words are
   rejected. "Lyon, not Paris" corrects Paris (functional predicates) or negates it (others).

Patterns (predicate ← examples)
-------------------------------
- ``lives_in`` (Place): I live/am living/reside in X, I'm based in X, I (have just) moved/relocated
  to X, moved from A to X, X is where I live, Name lives in/moved to X, my sister lives in X.
  Negation: I no longer live in X, I don't live in X anymore, I moved out of / away from X.
- ``works_at`` (Organization): I work at/for X, I joined X, I started at/with X, I got a job at X,
  I was hired by X, Name works at X; ``has_role`` too for "I'm a <role> at X" and "I work as a
  <role> (at X)". Negation: I left X, I quit X, I quit my job at X, I no longer work at X
  ("I left X" negates ``lives_in`` instead when a known fact says the speaker lives in X).
- ``likes`` (multi): like/love/enjoy/adore, I'm into X, I'm a (big) fan of X, fond of/crazy about X;
  lists ("hiking, cooking and jazz") give one fact per item; "to cook" → "cooking".
  ``dislikes``: hate/dislike/detest/can't stand X. ``prefers``: I prefer X (over/to Y),
  I'd rather X.
  ``favorite_<thing>``: my favorite/favourite <thing> is X, X is my favorite <thing>.
- ``name`` (value): my name is X, call me X, "(Hi,) I'm Sam" only at the start of a message.
- ``is_a``: Name is a/an Y ("Rex is a golden retriever"); ``has_pet``: my dog Rex, I have a cat
  named Tom, my dog's name is Rex. ``married_to``: Name is married to Name, my wife is Name.
- Relatives and managers by name: "Ana is my sister" / "my sister is Ana" → Ana ``sister_of``
  <speaker> (brother, sibling, cousin, mother/mom, father/dad, son, daughter, aunt, uncle,
  niece, nephew, grandmother, grandfather); "Rui is my manager/boss" → <speaker> ``has_manager``
  Rui. "Ana is my cousin, not my sister" is a correction (the kinship family ends the sister).
- ``has_status`` (value): <ticket/task> is done/blocked/broken/in progress/… — the subject must
  look like a task: an id with a digit ("Ticket ABC-12") or a task word (project, build, deploy…).
- ``uses_version`` (value, a string, leading "v" dropped): we use X version N, we're on X N,
  X is on version N, X runs version N, the X version is N ("we use X N" needs a capitalised X,
  the word "version" or a dotted version). ``uses``: I/we use X.
- ``has_endpoint`` (value): the endpoint is /v2/…, the X endpoint is /…, the endpoint for X is /….
  Without an owner the subject is the literal noun "endpoint" (likewise "version"), so that
  "the endpoint is /v1" and "the endpoint was never /v1, it was always /v2" agree.
- ``age`` (int): I'm 34 (years old); ``email``/``phone``/``birthday``/``has_role``: my email is …
- Corrections: "(Actually|Correction:) <clause>" → ``correct``; "X was never A, it was always B",
  "it's not A, it's B", "not A but B" → ``correct`` with object/value B and ``replaces`` A. The
  subject/predicate come from the words before "was never": "my <attribute>" → the speaker's
  attribute; "... endpoint/url/path" → ``has_endpoint``; "... version" → ``uses_version``; else by
  the shape of B (a path → ``has_endpoint``, a version → ``uses_version``, a status word →
  ``has_status``, "a/an Y" → ``is_a``); a pronoun ("it") is resolved by finding a known fact whose
  object/value is A (this episode, ``context.previous``, ``context.facts``); the never/always form
  falls back to predicate ``is``. "Sorry, I meant Lyon" corrects the most recent fact of this
  episode, else of the latest previous episode. "I never lived in Paris, I've always lived in
  Lyon" corrects too. A correction of a fact stated earlier in the same episode replaces it.

Types: the speaker, relatives and capitalised names with human predicates (lives_in, works_at,
likes…) are ``Person``; lives_in objects ``Place``; works_at objects ``Organization``; anything
else ``entity`` (an unknown type, which the resolver should merge with a typed entity of the same
key). Values (name, has_role, has_status, uses_version, has_endpoint, email…) carry no object.

Known limitations (by design, it is a conservative fallback for when no model is configured):
no coreference ("She lives in Rome" and reported speech give nothing), no simple-past states
("I lived in Paris" gives nothing; "I've lived" does), lowercase vague objects are dropped
("I work at a startup", "I moved to a new apartment"), "Osaka, Japan" keeps "Osaka", list
splitting can cut names joined by "and" that are not in a small fixed-phrase list, bare "I'm a
nurse" is not read as a role, English only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any, Final

from .._errors import PredicateError
from .._ids import entity_key
from .._models import EpisodeRecord, ExtractedEntity, ExtractedFact, Extraction, Scalar
from .._predicates import normalize_predicate
from ._base import ExtractionContext

__all__ = ["RulesExtractor"]

PERSON: Final = "Person"
PLACE: Final = "Place"
ORG: Final = "Organization"
ENTITY: Final = "entity"

_CONFIDENCE = 0.9
_WEAK = 0.7
_MAX_OBJECT_WORDS = 6

# Predicates whose target is a literal value rather than an entity.
_VALUE_PREDICATES = frozenset(
    {
        "name",
        "has_status",
        "uses_version",
        "has_endpoint",
        "has_role",
        "is",
        "email",
        "phone",
        "birthday",
        "age",
    }
)
_OBJECT_TYPES = {"lives_in": PLACE, "works_at": ORG, "married_to": PERSON}
# A capitalised-name subject of these predicates is a person.
_HUMAN_PREDICATES = frozenset(
    {
        "lives_in",
        "works_at",
        "has_role",
        "likes",
        "dislikes",
        "prefers",
        "has_pet",
        "married_to",
        "name",
        "age",
        "email",
        "phone",
        "birthday",
    }
)

# ----------------------------------------------------------------------------- word lists


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_KIN = (
    r"best\s+friend|wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|spouse|mom|mother|mum|"
    r"dad|father|son|daughter|brother|sister|sibling|friend|boss|manager|colleague|co-?worker|"
    r"roommate|flatmate|neighbou?r|cousin|aunt|uncle|grandma|grandmother|grandpa|grandfather|"
    r"kids|kid|children|child|baby|teammate|team\s+lead|tech\s+lead|mentor|landlord|parents"
)
_PETS = (
    r"guinea\s+pig|dog|cat|puppy|kitten|parrot|bird|hamster|rabbit|bunny|goldfish|fish|horse|"
    r"pony|turtle|tortoise|snake|lizard|gecko|ferret|rat|mouse|pet|retriever|labrador|poodle|"
    r"terrier|beagle|bulldog|husky|corgi|shepherd|spaniel|dachshund|chihuahua|pug|collie|tabby"
)
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}
_MONTHS.update(
    {
        "jan": 1,
        "feb": 2,
        "mar": 3,
        "apr": 4,
        "jun": 6,
        "jul": 7,
        "aug": 8,
        "sep": 9,
        "sept": 9,
        "oct": 10,
        "nov": 11,
        "dec": 12,
    }
)
_WEEKDAYS = {
    d: i
    for i, d in enumerate(
        ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    )
}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a few": 3,
    "few": 3,
    "a couple": 2,
    "a couple of": 2,
    "several": 3,
}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_PRONOUNS = _wordset(
    "i me my mine we us our ours you your yours he him his she her hers they them their theirs "
    "it its this that these those there here something anything everything nothing someone "
    "anyone everyone somebody anybody everybody one what which who whom whose how when where why "
    "stuff things myself yourself himself herself itself ourselves themselves home so too much "
    "more most all both either neither none some any lot whatever whoever"
)
# First words that make an object a clause, not a name.
_BAD_OBJECT_START = _wordset(
    "it it's its that this these those what how when where why who which whether if because "
    "there here you your i me my we our he she they them him her so very too really just not no "
    "far only yet sure exactly quite even always necessarily especially particularly mostly "
    "except including like such in on at during to of for with and or but from by as"
)
_NAME_STOP = _wordset(
    "I The A An This That These Those It Its There Here What Which Who Whom Whose When Where Why "
    "How My Your Our Their His Her He She They We You Me Us Them Everything Everyone Everybody "
    "Nothing Nobody Something Someone Somebody Anything Anyone Anybody All Some Most Many Any No "
    "None Not Yes Yeah Well So Now Then Also Just Maybe Perhaps Sure Thanks Thank Hello Hi Hey "
    "Today Tomorrow Yesterday Tonight Life Work Home Time One Each Both Either Neither Every Such "
    "Other Another If But And Or Because Since After Before While Although Though Please Let "
    "Ok Okay Oh Wow Great Good Nice Cool Sorry Actually Correction Update Note Btw Do Does Did Is "
    "Are Was Were Can Could Would Will Should Shall May Might Must Have Has Had Am Being Been "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March July "
    "September October November December Everyone Nope Yep Lol Haha Hmm Um Uh Still Never "
    "Always Really Again Last Next In On At For From With To As By Of During Every After Until"
)
_NOT_NAMES = _wordset(
    "Fine Good Great Okay Ok OK Sorry Back Here Home Ready Done Happy Sad Tired Busy Free New Sure "
    "Glad Excited Afraid Interested Curious Confused Lost Stuck Late Early Almost About Alright "
    "Well Better Ill Sick Hungry Bored Single Married Retired Unemployed Not In On At So Just Also "
    "Still Always Never Really Very Pretty Kind Sort Going Gonna Trying Looking Working Living "
    "Moving Thinking Feeling Doing Getting Having Using Planning Hoping Currently Now Actually "
    "American British English French German Italian Spanish Japanese Chinese Korean Indian "
    "Canadian Australian Mexican Brazilian Dutch Swiss Swedish Norwegian Danish Finnish Polish "
    "Russian Irish Scottish Welsh Greek Turkish Portuguese Vietnamese Thai Filipino African "
    "European Asian Catholic Christian Muslim Jewish Hindu Buddhist Vegan Vegetarian Sorry "
    "Afraid Aware Positive Certain Right Wrong Available Online Offline Hello Hi"
)
_TASK_WORDS = _wordset(
    "ticket task issue bug story epic pr mr project feature build deploy deployment migration "
    "release server service pipeline job sprint milestone rollout upgrade fix patch test tests "
    "ci cluster database db api backend frontend app website site branch workflow"
)
_STATUS = (
    r"in\s+progress|in\s+review|under\s+review|on\s+hold|done|finished|complete|completed|"
    r"broken|blocked|unblocked|open|closed|resolved|fixed|merged|deployed|shipped|cancell?ed|"
    r"stuck|failing|passing|ready|pending|paused|released|live|down|approved|rejected|wip"
)
_FIXED_PHRASES = (
    "rock and roll",
    "rock 'n' roll",
    "mac and cheese",
    "salt and pepper",
    "fish and chips",
    "peanut butter and jelly",
    "bread and butter",
    "pen and paper",
    "dungeons and dragons",
    "drum and bass",
    "rhythm and blues",
    "black and white",
    "law and order",
    "pride and prejudice",
    "lord of the rings",
    "bed and breakfast",
    "arts and crafts",
    "research and development",
)
_ATTRIBUTES = {
    "email": "email",
    "email address": "email",
    "e-mail": "email",
    "e-mail address": "email",
    "phone": "phone",
    "phone number": "phone",
    "mobile number": "phone",
    "cell": "phone",
    "birthday": "birthday",
    "date of birth": "birthday",
    "job": "has_role",
    "job title": "has_role",
    "title": "has_role",
    "role": "has_role",
    "position": "has_role",
    "occupation": "has_role",
    "profession": "has_role",
    "employer": "works_at",
    "company": "works_at",
    "wife": "married_to",
    "husband": "married_to",
    "spouse": "married_to",
    "age": "age",
    "name": "name",
}


def _alternation(words: Iterable[str]) -> str:
    ordered = sorted(words, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)


# ----------------------------------------------------------------------------- modifiers

_MODIFIER_GROUPS: dict[str, str] = {
    "be": "am|is|are|was|were|'m|'re|'s|be|been|being|got|get|gets|getting",
    "have": "have|has|had|'ve",
    "do": "do|does|did",
    "neg": "not|don't|dont|doesn't|doesnt|didn't|didnt|isn't|isnt|aren't|arent|wasn't|wasnt|"
    "weren't|werent|haven't|havent|hasn't|hasnt|hadn't|ain't",
    "never": "never",
    "ended": "no longer|no more|stopped|quit|used to",
    "modal": "would|could|might|may|should|will|shall|must|can|cannot|can't|'d|'ll|won't|"
    "wouldn't|couldn't|shouldn't|want to|wants to|wanted to|wanna|going to|gonna|gotta|got to|"
    "plan to|plans to|planning to|planned to|hope to|hopes to|hoping to|hoped to|need to|"
    "needs to|have to|has to|had to|about to|trying to|try to|tries to|tried to|thinking of|"
    "thinking about|considering|dreaming of|dream of|wish|wished|supposed to|intend to|"
    "intending to|expect to|expecting to|decided to|maybe|probably|possibly|perhaps|hopefully|"
    "soon|eventually",
    "always": "always",
    "adv": "also|still|currently|now|just|recently|finally|really|actually|truly|totally|"
    "absolutely|definitely|honestly|kind of|sort of|kinda|sorta|pretty|very|so|already|"
    "officially|originally|basically|usually|generally|mostly|genuinely|particularly|"
    "especially|happily|permanently|temporarily|even|seriously|literally|then|lately|both|all|"
    "too|again|only|mainly|primarily|newly|proudly|fully|started|began|begun|keep|kept|"
    "continue to|back|full-time|part-time",
}
_MODIFIERS: dict[str, str] = {
    phrase: category
    for category, phrases in _MODIFIER_GROUPS.items()
    for phrase in phrases.split("|")
}
_BE_NEG = frozenset(
    {"isn't", "isnt", "aren't", "arent", "wasn't", "wasnt", "weren't", "werent", "ain't"}
)
_MOD = re.compile(r"(?:\s+|(?='))(?P<m>" + _alternation(_MODIFIERS) + r")(?=\s|$|[,.;:!?])", re.I)

# ----------------------------------------------------------------------------- triggers


@dataclass(frozen=True)
class _Trigger:
    key: str
    rx: re.Pattern[str]
    subjects: frozenset[str]
    needs_be: bool = False


_P = frozenset({"fp", "name", "kin"})
_THIRD = frozenset({"name", "kin", "pet", "np"})
_SEP0 = r"(?:\s+|(?='))"
_ROLE = (
    r"(?P<role>(?!(?:big|huge|great|massive|real|total)?\s*fan\b)"
    r"[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)"
)


def _trig(key: str, body: str, subjects: frozenset[str], needs_be: bool = False) -> _Trigger:
    return _Trigger(
        key, re.compile(_SEP0 + "(?:" + body + r")(?=\s|$|[,.;:!?])", re.I), subjects, needs_be
    )


_TRIGGERS: tuple[_Trigger, ...] = (
    _trig("prefers", r"(?:'d|would)\s+(?:much\s+)?(?:prefer|rather(?:\s+have)?)", _P),
    _trig(
        "dislikes",
        r"(?:can't|cannot|can\s+not)\s+stand|hate|hates|dislike|dislikes|detest|"
        r"detests|loathe|loathes|(?P<past>hated|disliked|detested|loathed)",
        _P,
    ),
    _trig(
        "left",
        r"(?:left|quit|resigned\s+from|retired\s+from|laid\s+off\s+(?:from|by)|"
        r"fired\s+from)(?!\s+\w+ing\b)(?P<job>\s+my\s+(?:job|position|role|post)\s+(?:at|with))?",
        _P,
    ),
    _trig("move_out", r"(?:moved|move)\s+(?:out\s+of|away\s+from)", _P),
    _trig(
        "move",
        r"(?:moved|relocated)\s+(?:(?:back|over|here|permanently)\s+)?"
        r"(?:from\s+.+?\s+)?to",
        _P,
    ),
    _trig(
        "live",
        r"(?:live|lives|living|reside|resides|residing|(?P<past>lived|resided))\s+"
        r"(?:in|at)",
        _P,
    ),
    _trig("live", r"based\s+(?:in|out\s+of)", _P, needs_be=True),
    _trig(
        "likes",
        r"(?:a\s+(?:big\s+|huge\s+|great\s+|massive\s+|real\s+|total\s+)?fan\s+of|"
        r"into|crazy\s+about|passionate\s+about|obsessed\s+with|fond\s+of|keen\s+on|"
        r"a\s+(?:big\s+)?lover\s+of)",
        _P,
        needs_be=True,
    ),
    _trig("role_at", r"(?:a|an)\s+" + _ROLE + r"\s+(?:at|for|with)", _P, needs_be=True),
    _trig("work_as", r"(?:work|works|working|(?P<past>worked))\s+as\s+(?:a|an)", _P),
    _trig("work", r"(?:work|works|working|(?P<past>worked))\s+(?:at|for)", _P),
    _trig(
        "join",
        r"joined|started\s+(?:at|with)|started\s+(?:a\s+)?(?:new\s+)?(?:job|position|"
        r"role)\s+(?:at|with)|got\s+(?:a\s+)?(?:new\s+)?(?:job|position|role)\s+(?:at|with)|"
        r"hired\s+(?:at|by)|employed\s+(?:at|by)",
        _P,
    ),
    _trig(
        "likes",
        r"like|likes|liking|love|loves|loving|enjoy|enjoys|enjoying|adore|adores|"
        r"(?P<past>liked|loved|enjoyed|adored)",
        _P,
    ),
    _trig("prefers", r"prefer|prefers|preferring", _P),
    _trig("uses", r"use|uses|using", frozenset({"fp", "name"})),
    _trig("married", r"married\s+to", _P | {"name"}, needs_be=True),
    _trig("status", r"(?P<status>" + _STATUS + r")", _THIRD, needs_be=True),
    _trig(
        "version",
        r"(?:on|at|running|using)\s+(?:version\s+|v(?=\d))?(?P<ver>v?\d[\w.+-]*)",
        _THIRD,
        needs_be=True,
    ),
    _trig(
        "version",
        r"(?:runs|uses|running|using)\s+(?:version\s+|v(?=\d))(?P<ver>v?\d[\w.+-]*)",
        _THIRD,
    ),
    _trig("is_a", r"(?:a|an)", frozenset({"name", "kin", "pet"}), needs_be=True),
)

# ----------------------------------------------------------------------------- clause patterns

_SUBJECT = re.compile(
    r"(?P<fp>(?i:i|we)(?=\b|'))"
    r"|(?i:my|our)\s+(?:(?P<kin>(?i:" + _KIN + r"))|(?P<pet>(?i:" + _PETS + r")))"
    r"(?:\s*,?\s+(?P<kname>(?!I\b)[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)(?=\s*,?\s|'))?(?![\w'])"
    r"|(?P<np>(?i:the|our|my|this|that|its|their)\s+[A-Za-z][\w.-]*(?:\s+[A-Za-z][\w.-]*){0,2}?)"
    r"(?=\s+(?i:is|was|has|are|were|runs|uses|got|just|now|still|has\s+been)\b|')"
    r"|(?P<name>[A-Z][\w&.-]*(?:\s+(?:(?:of|de|van|von|da|del|du|la|le)\s+)?[A-Z0-9][\w&.-]*){0,3})"
)
_VERSION_TOKEN = r"v?\d+(?:\.\d+)*(?:[-+][\w.]+)?(?:\.x)?"
_TECH = r"[A-Za-z][\w.+#-]*(?:\s+(?!version\b)[A-Z][\w.+#-]*){0,2}"
_FP_VERSION = re.compile(
    r"(?:i|we)(?:'re|'m|'ve|\s+are|\s+am|\s+have)?\s+(?:(?:now|currently|still|already|just|all)\s+)*"
    r"(?:use|using|run|running|on|upgraded\s+to|migrated\s+to|switched\s+to|moved\s+to|"
    r"deploy|deploying|updated\s+to)\s+(?P<x>" + _TECH + r")\s+(?:version\s+|v(?=\d))?"
    r"(?P<ver>" + _VERSION_TOKEN + r")(?=\s|$|[,.;:!?])",
    re.I,
)
_NP_VERSION = re.compile(
    r"(?P<x>(?:(?:the|our|my|their|its)\s+)?[\w.+#-]+(?:\s+[\w.+#-]+){0,2}?)\s*"
    r"(?:(?:'s|\s+is|\s+are|\s+was)\s+(?:(?:now|currently|still|already)\s+)*"
    r"(?:(?:on|at|running|using)\s+(?:version\s+|v(?=\d))?|version\s+)"
    r"|\s+(?:runs|uses|has\s+been\s+upgraded\s+to|was\s+upgraded\s+to|got\s+upgraded\s+to|"
    r"upgraded\s+to|is\s+now\s+on)\s+(?:version\s+|v(?=\d))"
    r"|\s+version\s+(?:is|'s|=|:)\s+(?:now\s+)?)"
    r"(?P<ver>" + _VERSION_TOKEN + r")(?=\s|$|[,.;:!?])",
    re.I,
)
_BARE_VERSION = re.compile(
    r"(?:the\s+|our\s+)?version\s+(?:is|'s|=|:)\s+(?:now\s+)?(?P<ver>" + _VERSION_TOKEN + r")"
    r"(?=\s|$|[,.;:!?])",
    re.I,
)
_ENDPOINT = re.compile(
    r"(?P<np>(?:(?:the|our|my|its|their|your|this|that|new|current)\s+)*(?:[\w.-]+\s+){0,3}?)"
    r"(?P<noun>(?:endpoint|end\s*point|base\s+url|url|route|api\s+path|path))"
    r"(?:\s+(?:for|of)\s+(?P<owner>[\w.\s-]{1,40}?))?"
    r"\s*(?:is|'s|=|:|is\s+now|has\s+changed\s+to|changed\s+to|has\s+moved\s+to|moved\s+to|"
    r"is\s+still)\s+(?P<neg>(?:no\s+longer|not)\s+)?(?:now\s+)?(?:at\s+)?"
    r"(?P<path>(?:https?://|/)\S*)",
    re.I,
)
_INTRO = re.compile(
    r"(?i:i'm|i\s+am|im)\s+(?P<n>[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?)"
    r"(?:\s+(?i:here|from\s+.+))?\s*[.!,]*\s*$"
)
_CALL_ME = re.compile(
    r"(?i:(?:you\s+can\s+|please\s+|just\s+)?call\s+me)\s+"
    r"(?P<n>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s*[.!,]*\s*$"
)
_MY_NAME = re.compile(
    r"(?i:my\s+name(?:'s|\s+is)\s+(?:now\s+|actually\s+)?)"
    r"(?P<n>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})\s*[.!,]*\s*(?:$|,|(?i:and|but)\b)"
)
_FAVORITE = re.compile(
    r"(?:(?i:my|our)|(?P<owner>[A-Z][\w-]*)'s)\s+(?i:all[- ]time\s+)?"
    r"(?i:favorite|favourite|fave|fav)\s+(?P<t>(?i:[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}?))\s*"
    r"(?i:is|are|'s|has\s+always\s+been|is\s+still|will\s+always\s+be)\s+"
    r"(?P<neg>(?i:no\s+longer|not)\s+)?(?P<rest>.+)"
)
_FAVORITE_REV = re.compile(
    r"(?P<x>.+?)\s+(?i:is|are)\s+(?i:still\s+|definitely\s+|probably\s+)?(?i:my|our)\s+"
    r"(?i:all[- ]time\s+)?(?i:favorite|favourite|fave)\s+"
    r"(?P<t>(?i:[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}))"
    r"\s*[.!]*\s*$"
)
_MY_ATTRIBUTE = re.compile(
    r"(?i:my)\s+(?P<attr>(?i:" + _alternation(_ATTRIBUTES) + r"))(?:'s|\s+is)\s+"
    r"(?P<neg>(?i:no\s+longer|not)\s+)?(?P<rest>.+)"
)
_WHERE_I_LIVE = re.compile(
    r"(?P<x>.+?)\s+(?i:is\s+where\s+(?:i|we)\s+(?:(?:now|currently|still)\s+)?live)\b"
)
_PET_NAME_IS = re.compile(
    r"(?i:my|our)\s+(?P<kind>(?i:" + _PETS + r"))(?:'s)?\s+(?i:name(?:'s|\s+is))\s+"
    r"(?P<n>[A-Z][a-z'-]+)\b"
)
_PET_MY = re.compile(
    r"(?<![\w'])(?i:my|our)\s+(?:(?i:little|new|old|sweet|lovely|beloved|good|big|baby)\s+)?"
    r"(?P<kind>(?i:" + _PETS + r"))(?:\s*,\s*|\s+)(?:(?i:named|called)\s+)?(?P<n>[A-Z][a-z'-]+)\b"
)
_PET_ALSO = re.compile(
    r"\b(?i:and|also|plus)\s+(?:(?i:a|an|one|two|another)\s+)?(?:[a-z-]+\s+){0,2}?"
    r"(?P<kind>(?i:" + _PETS + r"))\s+(?i:named|called)\s+(?P<n>[A-Z][a-z'-]+)\b"
)
_AS_ROLE = re.compile(r"\s(?i:as)\s+(?i:a|an)\s+(?P<role>[A-Za-z][\w\s-]*)")
_PET_HAVE = re.compile(
    r"(?<![\w'])(?i:i|we)(?:\s+(?i:also|just|now|still))?\s*(?i:\s+have|'ve\s+got|\s+have\s+got|"
    r"\s+got|\s+own|\s+adopted|'ve\s+adopted|\s+have\s+adopted)\s+"
    r"(?:(?i:a|an|one|two|this)\s+)?(?:[a-z-]+\s+){0,2}?(?P<kind>(?i:" + _PETS + r"))\s+"
    r"(?i:named|called)\s+(?P<n>[A-Z][a-z'-]+)\b"
)
_AGE = re.compile(
    r"(?i:i'm|i\s+am|i\s+just\s+turned|i\s+turned|i've\s+just\s+turned)\s+(?P<n>\d{1,3})"
    r"(?i:\s+years?\s+old|\s+y/?o)?\s*[.!]*\s*$"
)
# "Ana is my sister" → Ana sister_of <speaker>; "Rui is my manager" → <speaker> has_manager Rui
# (predicate families, issue 13). "Ana is my cousin, not my sister" corrects the relation.
_RELATIONS: dict[str, str] = {
    "sister": "sister_of",
    "brother": "brother_of",
    "sibling": "sibling_of",
    "cousin": "cousin_of",
    "mother": "mother_of",
    "mom": "mother_of",
    "mum": "mother_of",
    "father": "father_of",
    "dad": "father_of",
    "son": "son_of",
    "daughter": "daughter_of",
    "aunt": "aunt_of",
    "uncle": "uncle_of",
    "niece": "niece_of",
    "nephew": "nephew_of",
    "grandmother": "grandmother_of",
    "grandma": "grandmother_of",
    "grandfather": "grandfather_of",
    "grandpa": "grandfather_of",
    "manager": "has_manager",
    "boss": "has_manager",
}
_REL = r"(?i:" + "|".join(sorted(_RELATIONS, key=len, reverse=True)) + r")"
_REL_NAME = r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?"
_RELATION_IS = re.compile(
    r"(?P<n>" + _REL_NAME + r")\s+(?i:is|'s)\s+(?:(?i:actually|really|now|still|also|in\s+fact)"
    r"\s+)?(?i:my|our)\s+(?:(?i:new|current)\s+)?(?P<rel>" + _REL + r")"
    r"(?:\s*,?\s+(?i:and\s+)?(?i:not)\s+(?i:my|our)\s+(?P<old>" + _REL + r"))?\s*[.!]*\s*$"
)
_MY_RELATION_IS = re.compile(
    r"(?i:my|our)\s+(?:(?i:new|current)\s+)?(?P<rel>" + _REL + r")\s+(?i:is|'s)\s+"
    r"(?:(?i:now|actually|still)\s+)?(?P<n>" + _REL_NAME + r")\s*[.!]*\s*$"
)

# ----------------------------------------------------------------------------- sentences

_NORMALIZE = str.maketrans(
    {
        "\u2019": "'",
        "\u2018": "'",
        "\u02bc": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00a0": " ",
        "\u2026": ".",
        "\t": " ",
        "\r": " ",
    }
)
_SENT_END = re.compile(r"[.!?]+(?=[\s\"')\]]|$)|\n+")
_ABBREV = _wordset(
    "mr mrs ms dr st mt jr sr inc ltd co corp vs etc e.g i.e u.s u.k approx prof ave rd dept "
    "fig sgt capt lt col rev"
)
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_QUESTION_START = re.compile(
    r"(?:(?i:do|does|did|are|is|was|were|can|could|would|will|should|shall|have|has|had|may|"
    r"might|must|am|won't|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|haven't|hasn't|"
    r"can't|couldn't|wouldn't|shouldn't)\s+(?:(?i:you|i|we|he|she|they|it|there|your|my|our|"
    r"their|his|her|the|this|that|anyone|anybody)\b|[A-Z]\w*)"
    r"|(?i:who|what|where|when|why|how|which|whose|whom)\b(?!\s+(?:i|we)\s))"
)
_QUESTION_TAIL = re.compile(
    r"(?i:and\s+)?(?i:what|how|and\s+you|you|right|isn't\s+it|don't\s+you|do\s+you|wbu|hbu|"
    r"huh|ok|okay|yeah|no)\b"
)
_HYPOTHETICAL = re.compile(
    r"(?i:if|unless|suppose|supposing|imagine|what\s+if|in\s+case|even\s+if|assuming|"
    r"hypothetically|whether|let's\s+say|once|when|whenever)\b"
)
_HEDGE = re.compile(
    r"(?i:maybe|perhaps|probably|possibly|hopefully|i\s+think|i\s+guess|i\s+suppose|"
    r"i\s+believe|i\s+hope|i\s+wish|i\s+doubt|i\s+wonder|not\s+sure|i'm\s+not\s+sure|"
    r"i\s+heard|they\s+say|apparently|supposedly|rumou?r)\b"
)
_LEAD = re.compile(
    r"\s*(?:(?P<corr>(?i:actually|correction|to\s+correct\s+myself|let\s+me\s+correct\s+"
    r"(?:that|myself)|i\s+stand\s+corrected|scratch\s+that|i\s+misspoke|my\s+mistake|my\s+bad|"
    r"oops|whoops|no\s+wait|wait\s+no|wait|(?:sorry\s*[,.!-]?\s*)?i\s+meant(?:\s+to\s+say)?|"
    r"sorry\s*[,.!-]?\s*i\s+mean|i\s+mean(?=\s*,)))"
    r"|(?P<greet>(?i:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening)|yo)"
    r"(?i:\s+there|\s+all|\s+everyone)?)"
    r"|(?P<fill>(?i:so|well|oh|ok|okay|yes|yeah|yep|yup|no(?!\s+longer)|nope|also|and|but|btw|"
    r"by\s+the\s+way|anyway|anyways|fyi|plus|now|then|honestly|basically|ps|p\.s\.|update|note|"
    r"sorry|thanks|thank\s+you|great|cool|nice|alright|all\s+right|right|um|uh|hmm|quick\s+update|"
    r"good\s+news|fun\s+fact|just\s+so\s+you\s+know|for\s+the\s+record|for\s+context|"
    r"for\s+what\s+it's\s+worth|as\s+you\s+know|as\s+i\s+said|like\s+i\s+said|in\s+fact|lol|"
    r"haha|in\s+any\s+case|anyhow|fwiw|tbh|to\s+be\s+honest|for\s+now)))"
    r"(?![\w'])\s*[,:;.!\-–—]*\s*"
)
_NOT_ANYMORE = re.compile(
    r"\s*(?i:but\s+)?(?i:not\s+any\s*more|no\s+longer|not\s+now|not\s+these\s+days)\s*[.!]*\s*$"
)

# Form A: "<np> was never <old>, it was always <new>"
_NEVER_ALWAYS = re.compile(
    r"(?P<np>.*?)\s*(?:\b(?:was|were|is|are|has|have|had)\b|'s|'ve)?\s*\bnever\s+"
    r"(?:been\s+|was\s+)?(?P<old>.+?)\s*(?:[,;:.]|\s[-–—]+)?\s+(?:but\s+)?"
    r"(?:(?:it|that|this|they|he|she)(?:'s|\s+(?:was|is|were|are|has|have))?\s+)?"
    r"(?:has\s+|have\s+)?always\s+(?:been\s+|was\s+|is\s+)?(?P<new>.+)$",
    re.I,
)
# Form B: "<np> is not <old>, it's <new>" / "not <old> but <new>"
_NOT_BUT = re.compile(
    r"(?P<np>.*?)\s*(?:\b(?:was|were|is|are)\s+not\b|\b(?:isn't|wasn't|aren't|weren't)\b|"
    r"'s\s+not\b|^not\b)\s+(?P<old>.+?)\s*(?P<sep>(?:[,;:.]|\s[-–—]+)\s*(?:but\s+)?|\s+but\s+)"
    r"(?P<mid>(?:it|that|this|they|he|she)(?:'s|\s+(?:is|was|are|were))\s+)?"
    r"(?:actually\s+|really\s+|rather\s+)?(?P<new>.+)$",
    re.I,
)
_CONTRAST_HEAD = re.compile(r"\bnever\b|\bnot\b|n't\b", re.I)
_CONTRAST_TAIL = re.compile(
    r"\s*(?:but\s+)?(?:it|that|this|they|he|she)(?:'s|\s+(?:is|was|has|were|are))\b", re.I
)

# ----------------------------------------------------------------------------- time phrases

_NUM = (
    r"(?:\d{1,3}|a\s+couple(?:\s+of)?|a\s+few|several|an?|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve)"
)
_MONTH_RX = _alternation(_MONTHS)
_WEEKDAY_RX = _alternation(_WEEKDAYS)
_TIME = re.compile(
    r"\b(?:(?P<yesterday>(?:just\s+)?yesterday|last\s+night)"
    r"|(?:over\s+)?(?:the\s+)?(?:last|past)\s+(?P<last_unit>week|month|year)"
    r"|last\s+(?P<last_wd>" + _WEEKDAY_RX + r")"
    r"|(?P<ago_n>" + _NUM + r")\s+(?P<ago_unit>day|week|month|year)s?\s+ago"
    r"|(?:back\s+)?(?:in|since|during|from)\s+(?:(?P<yr_part>early|late|mid)[\s-]+)?"
    r"(?:(?P<yr_month>" + _MONTH_RX + r")\s+)?(?P<year>(?:19|20)\d{2})"
    r"|(?:in|since)\s+(?P<month>" + _MONTH_RX + r")(?!\s*\d)"
    r"|(?:on|since)\s+(?P<iso>\d{4}-\d{2}-\d{2})"
    r"|for\s+(?:the\s+(?:past|last)\s+)?(?P<dur_n>" + _NUM + r")\s+(?P<dur_unit>day|week|month|"
    r"year)s?"
    r"|(?P<future>tomorrow|next\s+(?:week|month|year|" + _WEEKDAY_RX + r"|spring|summer|fall|"
    r"autumn|winter|weekend|time)|in\s+" + _NUM + r"\s+(?:day|week|month|year)s?|soon|someday|"
    r"some\s+day|one\s+day|later\s+this\s+(?:week|month|year))"
    r"|(?P<filler>right\s+now|these\s+days|nowadays|at\s+the\s+moment|at\s+present|lately|"
    r"recently|currently|today|tonight|this\s+(?:morning|afternoon|evening|week|month|year)|"
    r"earlier\s+today|for\s+years|for\s+a\s+while|for\s+ages|for\s+good|for\s+now|"
    r"last\s+(?:spring|summer|fall|autumn|winter|weekend)))\b",
    re.I,
)
_TIME_FILLER_LOWER = re.compile(r"\b(?:now|again)\b")

# ----------------------------------------------------------------------------- clauses

_SEP = re.compile(
    r"\s*(?:[,;](?=\s)|:(?=\s)|\s[-–—]{1,2}(?=\s))\s*(?:(?i:and|but|so|then|yet|plus|or|because|"
    r"since|while|whereas|although|though)\b\s*)?"
    r"|\s+(?i:and|but|so|then|yet|plus|because|since|while|whereas|although|though)\s+"
)
_CLAUSE_VERBS = (
    r"live|lives|living|moved|relocated|work|works|working|joined|started|left|quit|like|likes|"
    r"love|loves|enjoy|enjoys|adore|adores|hate|hates|dislike|dislikes|detest|prefer|prefers|"
    r"have|has|got|own|owns|use|uses|no\s+longer|don't|do\s+not|doesn't|never|used\s+to|"
    r"stopped|can't\s+stand|cannot\s+stand"
)
_CLAUSE_START = re.compile(
    r"(?:(?i:also|now|then|actually|still|currently|recently|just|really|honestly|even)\s+)*"
    r"(?:(?P<pron>(?i:i|we)(?:'[a-z]+)?\b|(?i:my|our|he|she|they|it|it's|you|your|that|this|"
    r"there|here|what|who|not\s+any\s*more|no\s+longer)\b)"
    r"|(?P<name>[A-Z][\w&.-]*(?:\s+[A-Z0-9][\w&.-]*){0,3}(?:'s)?\s+(?i:is|was|has|have|lives|"
    r"lived|works|worked|moved|relocated|likes|loves|hates|enjoys|prefers|joined|left|quit|uses|"
    r"runs|got|just|also|now|no|never|still|doesn't|does|isn't)\b)"
    r"|(?P<verb>(?i:" + _CLAUSE_VERBS + r"))\b)"
)

# ----------------------------------------------------------------------------- objects

_CAPRUN = re.compile(
    r"(?:[Tt]he\s+)?(?!I\b)[A-Z0-9][\w'&.-]*"
    r"(?:\s+(?:(?:of|de|da|del|der|du|la|le|los|las|am|upon|the|&)\s+)*(?!I\b)[A-Z0-9][\w'&.-]*)*"
)
_PUNCT_STOP = r"\s*(?:[,;:()!?\"]|\.(?=\s|$)|\s[-–—]+\s|\s*[:;]-?[)(DP])"
_STOP_PLACE = re.compile(
    _PUNCT_STOP + r"|\s+(?i:with|because|since|when|while|but|and|or|although|though|as|so|"
    r"which|who|where|that|if|unless|until|after|before|from|for|near|by|at|on|in|into|to|than|"
    r"like|now|again|anymore|too|also|currently|lol|haha|just|yet|not|either)\b"
)
_STOP_THING = re.compile(
    _PUNCT_STOP + r"|\s+(?i:with|because|since|when|whenever|while|but|although|though|as|so|"
    r"which|who|where|that|if|unless|until|than|more\s+than|better\s+than|over|rather|instead|"
    r"now|again|anymore|any\s+more|no\s+more|too|also|currently|lol|haha|a\s+lot|very\s+much|"
    r"so\s+much|like\s+crazy|not|and|or|&|especially|particularly|except|including|such\s+as|"
    r"(?:in|on|at|during|every|each)\s+(?:the|my|our|a|an|summer|winter|spring|fall|autumn|"
    r"evenings?|mornings?|weekends?))\b"
)
_STOP_LIST = re.compile(
    r"\s*(?:[;:()!?\"]|\.(?=\s|$)|\s[-–—]+\s)|\s+(?i:with|because|since|when|whenever|while|but|"
    r"although|though|as|so|which|who|where|that|if|unless|until|than|more\s+than|better\s+than|"
    r"over|rather|instead|now|again|anymore|any\s+more|no\s+more|too|also|currently|lol|haha|"
    r"a\s+lot|very\s+much|so\s+much|like\s+crazy|not|especially|particularly|except|including|"
    r"such\s+as|(?:in|on|at|during|every|each)\s+(?:the|my|our|a|an|summer|winter|spring|fall|"
    r"autumn|evenings?|mornings?|weekends?))\b"
)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:(?:and|or|&)\s+)?|\s+(?:and|or|&)\s+", re.I)
_TAIL_FILLER = re.compile(
    r"(?:\s+(?i:now|these\s+days|nowadays|again|anymore|any\s+more|no\s+more|too|as\s+well|"
    r"also|currently|right\s+now|at\s+the\s+moment|lately|a\s+lot|very\s+much|so\s+much|already|"
    r"still|though|instead|honestly|really|actually|lol|haha|then|for\s+now|for\s+good|forever|"
    r"full[- ]time|part[- ]time|anyway|ok|okay|btw)|\s*[.,;:!?)\"'*~]+|\s*[:;]-?[)(DP])+$"
)
_LEAD_JUNK = re.compile(r"^[\s,;:.!?\"'(*~-]+")
_SELF_CORRECTION = re.compile(
    r"(?P<old>[^,]+?)\s*,?\s+(?i:actually|sorry|i\s+mean|i\s+meant|no\s+wait|wait)\s*,?\s+"
    r"(?P<new>.+)$"
)
_NOT_SUFFIX = re.compile(
    r"(?P<new>[^,]+?)\s*,?\s+(?i:and\s+)?(?i:not)\s+(?i:in\s+|at\s+|to\s+|for\s+)?(?P<old>.+)$"
)
_OVER = re.compile(r"\s+(?i:over|to|rather\s+than|instead\s+of|more\s+than|than)\s+(?P<y>.+)$")
_TO_VERB = re.compile(r"(?i:to)\s+(?P<v>[a-z]+)\b(?P<tail>.*)$")
_IS_PATH = re.compile(r"^(?:https?://\S+|/\S*)$")
_IS_VERSION = re.compile(r"^v?\d+(?:\.\d+)*(?:[-+.]?[A-Za-z0-9]+)*$", re.I)
_IS_STATUS = re.compile(r"^(?:" + _STATUS + r")$", re.I)
_CONTRAST_PREFIX = re.compile(
    r"^(?:(?:on|at|in|to|for|using|running)\s+)?(?:version\s+|the\s+version\s+)?", re.I
)
_ENDPOINT_NOUN = re.compile(
    r"\s*\b(?:endpoint|end\s*point|base\s+url|url|route|api\s+path|path)s?$", re.I
)
_VERSION_NOUN = re.compile(r"\s*\bversion(?:\s+number)?$", re.I)
_BARE_LEAD = re.compile(
    r"^(?:(?i:it's|it\s+is|it\s+was|that's|that\s+is|i\s+meant|i\s+mean|rather|instead)\s+)+"
)
_ARTICLE = re.compile(r"^(?i:a|an)\s+")
_WORD = re.compile(r"[A-Za-z0-9]")


# ----------------------------------------------------------------------------- small helpers


def _squash(text: str) -> str:
    return " ".join(text.split())


def _tidy(text: str) -> str:
    """Collapse whitespace and strip leading junk, trailing fillers and punctuation."""
    out = " " + _LEAD_JUNK.sub("", _squash(text))
    return _TAIL_FILLER.sub("", out).strip()


def _valid(candidate: str | None, *, max_words: int = _MAX_OBJECT_WORDS) -> str | None:
    if candidate is None:
        return None
    text = _tidy(candidate)
    if not text or not _WORD.search(text):
        return None
    words = text.split()
    if len(words) > max_words:
        return None
    lower = text.lower()
    if lower in _PRONOUNS or words[0].lower() in _BAD_OBJECT_START:
        return None
    if lower in ("a", "an", "the", "home", "night", "nights", "weekends", "work", "school"):
        return None
    return text


def _cut(text: str, stop: re.Pattern[str]) -> str:
    match = stop.search(text)
    return text[: match.start()] if match else text


def _gerund(verb: str) -> str:
    verb = verb.lower()
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and len(verb) > 2:
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _to_gerund(text: str) -> str:
    match = _TO_VERB.match(text)
    if not match:
        return text
    return _gerund(match.group("v")) + match.group("tail")


def _article(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


def _is_capitalised(text: str) -> bool:
    first = text.split()[0] if text.split() else ""
    if first.lower() == "the" and len(text.split()) > 1:
        first = text.split()[1]
    return bool(first) and (first[0].isupper() or first[0].isdigit())


def _snake(text: str) -> str | None:
    cleaned = re.sub(r"[^a-z0-9\s_-]", "", text.lower().replace("favourite", "favorite"))
    cleaned = re.sub(r"[\s\-]+", "_", cleaned.strip())
    try:
        return normalize_predicate(cleaned)
    except PredicateError:
        return None


_key = lru_cache(maxsize=8192)(entity_key)


def _same(a: str, b: str) -> bool:
    return a == b or _key(a) == _key(b)


def _strip_lead(text: str) -> tuple[str, bool]:
    """Strip leading greetings, fillers and correction markers: (rest, is a correction)."""
    correcting = False
    while True:
        match = _LEAD.match(text)
        if not match or match.end() == 0:
            return text, correcting
        correcting = correcting or bool(match.group("corr"))
        text = text[match.end() :]


def _place(rest: str) -> str | None:
    """The place / organisation name at the start of ``rest`` (the name span only)."""
    text = _LEAD_JUNK.sub("", _squash(rest))
    match = _CAPRUN.match(text)
    if match:
        candidate = match.group().rstrip(".")
        # "Osaka, Japan" keeps only the first part; a trailing possessive is kept ("Joe's").
        return _valid(candidate)
    candidate = _cut(text, _STOP_PLACE)
    first = candidate.split()[0].lower() if candidate.split() else ""
    if first in ("a", "an", "my", "our", "his", "her", "their", "another", "some", "this"):
        return None
    return _valid(candidate)


def _thing(rest: str, *, max_words: int = _MAX_OBJECT_WORDS) -> str | None:
    text = _to_gerund(_LEAD_JUNK.sub("", _squash(rest)))
    return _valid(_cut(text, _STOP_THING), max_words=max_words)


def _things(rest: str) -> list[str]:
    """A list object ("hiking, cooking and jazz") → one item each; fixed phrases stay whole."""
    text = _LEAD_JUNK.sub("", _squash(rest))
    text = _cut(text, _STOP_LIST)
    protected = text
    lowered = text.lower()
    for phrase in _FIXED_PHRASES:
        start = lowered.find(phrase)
        if start >= 0:
            span = protected[start : start + len(phrase)]
            tail = protected[start + len(phrase) :]
            protected = protected[:start] + span.replace(" ", "\x00") + tail
    items: list[str] = []
    for part in _LIST_SPLIT.split(protected):
        item = _valid(_to_gerund(part.replace("\x00", " ").strip()))
        if item is not None and not any(_same(item, seen) for seen in items):
            items.append(item)
    return items


def _contrast_value(text: str) -> str | None:
    """Clean one side of "never A, always B": drop prepositions, 'version', fillers."""
    text = _CONTRAST_PREFIX.sub("", _squash(text))
    first = text.split()[0] if text.split() else ""
    if _IS_PATH.match(first.rstrip(".,;:!?)")):
        return first.rstrip(".,;:!?)")
    text = _cut(text, _STOP_THING)
    return _valid(text)


def _strip_v(version: str) -> str:
    return version[1:] if version[:1] in "vV" and version[1:2].isdigit() else version


def _np_name(np: str, speaker: str) -> tuple[str, bool]:
    """A noun phrase without determiners; "my X" belongs to the speaker. (name, is_mine)."""
    words = np.split()
    mine = False
    while words and words[0].lower() in (
        "the",
        "our",
        "my",
        "your",
        "its",
        "their",
        "this",
        "that",
        "these",
        "those",
        "new",
        "current",
        "a",
        "an",
    ):
        mine = mine or words[0].lower() == "my"
        words = words[1:]
    name = " ".join(words)
    if mine and name:
        return f"{speaker}'s {name}", True
    return name, False


# ----------------------------------------------------------------------------- time


def _months_ago(ref: datetime, month: int, year: int | None) -> datetime:
    if year is None:
        year = ref.year if month <= ref.month else ref.year - 1
    return datetime(year, month, 1, tzinfo=UTC)


def _number(text: str) -> int | None:
    text = _squash(text.lower())
    if text.isdigit():
        return int(text)
    return _NUMBERS.get(text)


def _resolve_time(match: re.Match[str], ref: datetime) -> tuple[datetime | None, bool]:
    """(valid_from or None, is_future) for one time phrase."""
    g = match.groupdict()
    if g["future"]:
        return None, True
    if g["yesterday"]:
        return ref - timedelta(days=1), False
    if g["last_unit"]:
        return ref - timedelta(days=_UNIT_DAYS[g["last_unit"].lower()]), False
    if g["last_wd"]:
        back = (ref.weekday() - _WEEKDAYS[g["last_wd"].lower()]) % 7 or 7
        return ref - timedelta(days=back), False
    if g["ago_n"]:
        n = _number(g["ago_n"])
        if n is None:
            return None, False
        return ref - timedelta(days=n * _UNIT_DAYS[g["ago_unit"].lower()]), False
    if g["year"]:
        year = int(g["year"])
        month = 1
        if g["yr_month"]:
            month = _MONTHS[g["yr_month"].lower()]
        elif g["yr_part"]:
            month = {"early": 1, "mid": 7, "late": 10}[g["yr_part"].lower()]
        return datetime(year, month, 1, tzinfo=UTC), False
    if g["month"]:
        return _months_ago(ref, _MONTHS[g["month"].lower()], None), False
    if g["iso"]:
        try:
            day = datetime.strptime(g["iso"], "%Y-%m-%d")
        except ValueError:
            return None, False
        return day.replace(tzinfo=UTC), False
    if g["dur_n"]:
        n = _number(g["dur_n"])
        if n is None:
            return None, False
        return ref - timedelta(days=n * _UNIT_DAYS[g["dur_unit"].lower()]), False
    return None, False


# ----------------------------------------------------------------------------- data


@dataclass(slots=True)
class _Subject:
    name: str
    kind: str  # fp | name | kin | pet | np
    type: str
    end: int = 0


@dataclass(slots=True)
class _Draft:
    subject: str
    subject_type: str
    predicate: str
    object: str | None = None
    value: Scalar | None = None
    object_type: str = ENTITY
    kind: str = "assert"
    replaces: str | None = None
    evidence: str = ""
    valid_from: datetime | None = None
    confidence: float = _CONFIDENCE
    subject_kind: str = "name"
    negation: str = "ended"  # ended ("no longer") | not ("does not")
    never: bool = False
    always: bool = False
    move: bool = False
    detail: str | None = None  # pet kind, "over Y" of a preference

    @property
    def target(self) -> str:
        return self.object if self.object is not None else str(self.value)


@dataclass(slots=True)
class _Prior:
    subject: str
    subject_type: str
    predicate: str
    target: str
    is_object: bool
    object_type: str
    value: Scalar | None


@dataclass(slots=True)
class _Clause:
    work: str
    evidence: str
    valid_from: datetime | None
    future: bool
    inherit: bool


@dataclass
class _State:
    speaker: str
    ref: datetime
    context: ExtractionContext
    drafts: list[_Draft] = field(default_factory=list)
    last_subject: _Subject | None = None
    at_start: bool = True
    use_previous: bool = True
    previous_cache: list[_Prior] | None = None


# ----------------------------------------------------------------------------- extractor


class RulesExtractor:
    """Offline English pattern extractor for plain text and chat messages (see module docs)."""

    name = "rules"
    needs_context = False

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        drafts = self._drafts(episode, context, use_previous=True)
        facts = [_to_fact(d, d.predicate not in context.predicates) for d in drafts]
        return Extraction(entities=_entities(drafts), facts=facts)

    # ------------------------------------------------------------------ episode level
    def _drafts(
        self, episode: EpisodeRecord, context: ExtractionContext, *, use_previous: bool
    ) -> list[_Draft]:
        text = _episode_text(episode)
        if not text or not text.strip():
            return []
        speaker = (context.speaker or "").strip() or "user"
        state = _State(
            speaker=speaker, ref=episode.reference_time, context=context, use_previous=use_previous
        )
        for who, segment in _segments(text.translate(_NORMALIZE), speaker):
            state.speaker = who
            state.at_start = True
            state.last_subject = None
            for sentence, end in _merge_contrasts(_sentences(segment)):
                self._sentence(sentence, end, state)
        return _finish(state.drafts)

    # ------------------------------------------------------------------ sentence level
    def _sentence(self, sentence: str, end: str, st: _State) -> None:
        text = sentence.strip()
        if not text:
            return
        if end == "?":
            text = _declarative_head(text) or ""
            if not text:
                st.at_start = False
                return
        text, correcting = _strip_lead(text)
        if not text.strip():
            return
        if _QUESTION_START.match(text) or _HYPOTHETICAL.match(text):
            st.at_start = False
            return
        contrast = self._contrast(text, st)
        if contrast is not None:
            contrast.evidence = _squash(sentence).strip(" .!")
            st.drafts.append(contrast)
            st.at_start = False
            return
        before = len(st.drafts)
        clauses = _clauses(text, st.ref)
        for clause in clauses:
            if not clause.work.strip():
                continue
            if _NOT_ANYMORE.match(clause.evidence) and st.drafts:
                last = st.drafts[-1]
                if last.kind != "negate":
                    last.kind = "negate"
                    last.negation = "ended"
                    last.replaces = None
                continue
            drafts = self._clause(clause, st)
            for draft in drafts:
                if correcting and draft.kind == "assert" and not draft.move:
                    draft.kind = "correct"
            st.drafts.extend(drafts)
            st.at_start = False
        _pair_never_always(st.drafts, before)
        if correcting and len(st.drafts) == before:
            bare = self._bare_correction(text, st)
            if bare is not None:
                bare.evidence = _squash(sentence).strip(" .!")
                st.drafts.append(bare)

    # ------------------------------------------------------------------ clause level
    def _clause(self, clause: _Clause, st: _State) -> list[_Draft]:
        if clause.future:
            return []
        text, correcting = _strip_lead(clause.work)
        text = text.strip()
        if not text or _HEDGE.match(text) or _HYPOTHETICAL.match(text):
            return []
        drafts = self._special(text, clause, st)
        if drafts is None:
            drafts = self._grammar(text, clause, st)
        drafts = drafts + self._pets(text, clause, st, drafts)
        for draft in drafts:
            draft.evidence = draft.evidence or clause.evidence
            if draft.valid_from is None and clause.valid_from is not None:
                draft.valid_from = clause.valid_from
            if correcting and draft.kind == "assert" and not draft.move:
                draft.kind = "correct"
        if clause.valid_from is not None and clause.valid_from > st.ref:
            return []
        return drafts

    def _special(self, text: str, clause: _Clause, st: _State) -> list[_Draft] | None:
        """Whole-clause patterns; None when none applies."""
        sp = st.speaker
        lower = text.lower()
        digits = any(ch.isdigit() for ch in text)
        mine = lower.startswith(("my ", "our "))
        if st.at_start:
            match = _INTRO.match(text)
            if match and match.group("n").split()[0] not in _NOT_NAMES:
                return [_Draft(sp, PERSON, "name", value=match.group("n"), subject_kind="fp")]
        match = _CALL_ME.match(text) if "call me" in lower else None
        if match and match.group("n").split()[0] not in _NOT_NAMES:
            return [_Draft(sp, PERSON, "name", value=match.group("n"), subject_kind="fp")]
        match = _MY_NAME.match(text) if mine else None
        if match and match.group("n").lower() not in _PRONOUNS:
            return [_Draft(sp, PERSON, "name", value=match.group("n"), subject_kind="fp")]
        match = _AGE.match(text) if digits else None
        if match and 0 < int(match.group("n")) < 130:
            return [_Draft(sp, PERSON, "age", value=int(match.group("n")), subject_kind="fp")]
        match = _PET_NAME_IS.match(text) if mine and "name" in lower else None
        if match:
            return [
                _Draft(
                    sp,
                    PERSON,
                    "has_pet",
                    object=match.group("n"),
                    subject_kind="fp",
                    detail=match.group("kind").lower(),
                )
            ]
        fav = "fav" in lower
        match = _FAVORITE.match(text) if fav else None
        if match:
            return self._favorite(
                match.group("owner"),
                match.group("t"),
                match.group("rest"),
                bool(match.group("neg")),
                st,
            )
        match = _FAVORITE_REV.match(text) if fav else None
        if match:
            return self._favorite(None, match.group("t"), match.group("x"), False, st)
        if " my " in lower or " our " in lower or mine:
            match = _RELATION_IS.match(text) or _MY_RELATION_IS.match(text)
            if match and match.group("n").split()[0] not in _NAME_STOP | _NOT_NAMES:
                return self._relation(match, st)
        match = _MY_ATTRIBUTE.match(text) if mine else None
        if match:
            return self._attribute(match, st)
        match = _WHERE_I_LIVE.match(text) if "where" in lower else None
        if match:
            place = _place(match.group("x"))
            if place is None:
                return []
            return [
                _Draft(sp, PERSON, "lives_in", object=place, object_type=PLACE, subject_kind="fp")
            ]
        match = _ENDPOINT.match(text) if "/" in text else None
        if match:
            return self._endpoint(match, st)
        if not digits:
            return None
        match = _FP_VERSION.match(text)
        if match:
            tech = _valid(match.group("x"))
            explicit = re.search(r"(?i:version|\sv\d)", match.group()) is not None
            if tech is None or not (explicit or tech[:1].isupper() or "." in match.group("ver")):
                return []
            return [
                _Draft(
                    tech,
                    ENTITY,
                    "uses_version",
                    value=_strip_v(match.group("ver")),
                    subject_kind="name",
                )
            ]
        match = _BARE_VERSION.match(text)
        if match:
            return [
                _Draft(
                    "version",
                    ENTITY,
                    "uses_version",
                    value=_strip_v(match.group("ver")),
                    subject_kind="np",
                )
            ]
        match = _NP_VERSION.match(text)
        if match:
            name, _mine = _np_name(match.group("x"), sp)
            name = _VERSION_NOUN.sub("", name).strip() or "version"
            if name.lower() in _PRONOUNS or name.lower() in ("i", "we"):
                return []
            kind = "np" if name[:1].islower() else "name"
            return [
                _Draft(
                    name,
                    ENTITY,
                    "uses_version",
                    value=_strip_v(match.group("ver")),
                    subject_kind=kind,
                )
            ]
        return None

    def _favorite(
        self, owner: str | None, thing: str, rest: str, negated: bool, st: _State
    ) -> list[_Draft]:
        predicate = _snake("favorite " + thing)
        if predicate is None:
            return []
        obj = _thing(rest)
        if obj is None:
            return []
        if owner is not None and owner in _NAME_STOP:
            return []
        subject = owner or st.speaker
        return [
            _Draft(
                subject,
                PERSON,
                predicate,
                object=obj,
                kind="negate" if negated else "assert",
                negation="not",
                subject_kind="name" if owner else "fp",
            )
        ]

    def _relation(self, match: re.Match[str], st: _State) -> list[_Draft]:
        """A relative or a manager by name; ", not my <other>" makes it a correction."""
        name = match.group("n")
        predicate = _RELATIONS[match.group("rel").lower()]
        kind = "correct" if match.groupdict().get("old") else "assert"
        if predicate == "has_manager":
            return [
                _Draft(
                    st.speaker,
                    PERSON,
                    predicate,
                    object=name,
                    object_type=PERSON,
                    kind=kind,
                    subject_kind="fp",
                )
            ]
        return [
            _Draft(
                name,
                PERSON,
                predicate,
                object=st.speaker,
                object_type=PERSON,
                kind=kind,
                subject_kind="name",
            )
        ]

    def _attribute(self, match: re.Match[str], st: _State) -> list[_Draft]:
        attr = _squash(match.group("attr").lower())
        predicate = _ATTRIBUTES.get(attr, "")
        kind = "negate" if match.group("neg") else "assert"
        rest = match.group("rest")
        sp = st.speaker
        if predicate in ("works_at", "married_to"):
            obj = _place(rest)
            if obj is None or not _is_capitalised(obj):
                return []
            otype = ORG if predicate == "works_at" else PERSON
            return [
                _Draft(
                    sp,
                    PERSON,
                    predicate,
                    object=obj,
                    object_type=otype,
                    kind=kind,
                    negation="not",
                    subject_kind="fp",
                )
            ]
        if predicate == "age":
            number = re.match(r"\s*(\d{1,3})\b", rest)
            if not number:
                return []
            return [
                _Draft(sp, PERSON, "age", value=int(number.group(1)), kind=kind, subject_kind="fp")
            ]
        if predicate == "has_role":
            role = _thing(_ARTICLE.sub("", rest.strip()), max_words=4)
            if role is None:
                return []
            return [
                _Draft(
                    sp, PERSON, "has_role", value=role, kind=kind, negation="not", subject_kind="fp"
                )
            ]
        if predicate == "name":
            return []  # handled by _MY_NAME (capitalised names only)
        token = rest.strip().split()[0].rstrip(".,;!?") if rest.strip() else ""
        if not token:
            return []
        return [
            _Draft(sp, PERSON, predicate, value=token, kind=kind, negation="not", subject_kind="fp")
        ]

    def _endpoint(self, match: re.Match[str], st: _State) -> list[_Draft]:
        path = match.group("path").rstrip(".,;:!?)\"'")
        if not path:
            return []
        owner = match.group("owner")
        if owner:
            subject, _mine = _np_name(owner.strip(), st.speaker)
        else:
            subject, _mine = _np_name(match.group("np"), st.speaker)
        subject = _squash(subject) or "endpoint"
        if subject.lower() in _PRONOUNS:
            subject = "endpoint"
        kind = "np" if subject[:1].islower() else "name"
        return [
            _Draft(
                subject,
                ENTITY,
                "has_endpoint",
                value=path,
                kind="negate" if match.group("neg") else "assert",
                negation="not",
                subject_kind=kind,
            )
        ]

    # ------------------------------------------------------------------ the clause grammar
    def _subject(self, text: str, clause: _Clause, st: _State) -> _Subject | None:
        match = _SUBJECT.match(text)
        subject: _Subject | None = None
        if match:
            if match.group("fp"):
                subject = _Subject(st.speaker, "fp", PERSON, match.end())
            elif match.group("kin") or match.group("pet"):
                noun = _squash(match.group("kin") or match.group("pet")).lower()
                is_pet = match.group("pet") is not None
                if match.group("kname"):
                    name = match.group("kname")
                    if name.split()[0] in _NAME_STOP:
                        name = ""
                    if name:
                        subject = _Subject(
                            name,
                            "pet" if is_pet else "kin",
                            ENTITY if is_pet else PERSON,
                            match.end(),
                        )
                if subject is None:
                    end = match.end("kin") if match.group("kin") else match.end("pet")
                    subject = _Subject(
                        f"{st.speaker}'s {noun}",
                        "pet" if is_pet else "kin",
                        ENTITY if is_pet else PERSON,
                        end,
                    )
            elif match.group("np"):
                name, _mine = _np_name(match.group("np"), st.speaker)
                if name and name.lower() not in _PRONOUNS:
                    subject = _Subject(name, "np", ENTITY, match.end())
            elif match.group("name"):
                name = match.group("name").rstrip(".")
                tokens = name.split()
                if tokens and tokens[0] not in _NAME_STOP and tokens[0] not in ("I",):
                    subject = _Subject(name, "name", ENTITY, match.end("name"))
        if subject is None and clause.inherit and st.last_subject is not None:
            last = st.last_subject
            subject = _Subject(last.name, last.kind, last.type, 0)
        return subject

    def _grammar(self, text: str, clause: _Clause, st: _State) -> list[_Draft]:
        subject = self._subject(text, clause, st)
        if subject is None:
            return []
        st.last_subject = subject
        if subject.end == 0:
            text = " " + text  # an inherited subject: "... and joined Globex"
        pos = subject.end
        mods: list[str] = []
        for _ in range(14):
            for trig in _TRIGGERS:
                if subject.kind not in trig.subjects:
                    continue
                match = trig.rx.match(text, pos)
                if match is None:
                    continue
                drafts = self._apply(trig, match, text[match.end() :], subject, mods, st)
                if drafts is not None:
                    return drafts
            mod = _MOD.match(text, pos)
            if mod is None:
                return []
            mods.append(_squash(mod.group("m").lower()))
            pos = mod.end()
        return []

    def _apply(
        self,
        trig: _Trigger,
        match: re.Match[str],
        rest: str,
        subject: _Subject,
        mods: list[str],
        st: _State,
    ) -> list[_Draft] | None:
        """Drafts for a matched trigger; None lets the next trigger try."""
        cats = {_MODIFIERS.get(m, "adv") for m in mods}
        if "modal" in cats:
            return []
        negated = bool(cats & {"neg", "never", "ended"})
        be = "be" in cats or any(m in _BE_NEG for m in mods)
        if trig.needs_be and not be:
            return None
        groups = match.groupdict()
        if groups.get("past") and not (cats & {"have", "neg", "never", "ended"}):
            return []  # simple past ("I lived in Paris"): not known to hold now
        style = (
            "ended"
            if cats & {"ended"} or re.search(r"\banymore\b|\bany more\b", rest, re.I)
            else "not"
        )
        if re.search(r"\b(?:anymore|any\s+more|no\s+more)\b", rest, re.I):
            negated = True
        kind = "negate" if negated else "assert"
        base: dict[str, Any] = {
            "subject": subject.name,
            "subject_kind": subject.kind,
            "never": "never" in cats,
            "always": "always" in cats,
            "negation": style,
        }
        key = trig.key
        drafts: list[_Draft] = []
        if key in ("live", "move", "move_out"):
            if key == "move_out":
                if negated:
                    return []
                kind, style = "negate", "ended"
                base["negation"] = style
            drafts = self._with_corrections(
                rest, _place, "lives_in", PLACE, kind, subject, base, functional=True
            )
            for d in drafts:
                d.move = key == "move"
        elif key in ("work", "join"):
            drafts = self._with_corrections(
                rest, _place, "works_at", ORG, kind, subject, base, functional=True
            )
            if key == "join" and re.match(r"\s*(?i:joined|started)", match.group()):
                drafts = [d for d in drafts if _is_capitalised(d.target)]
            role_as = _AS_ROLE.search(rest)
            if drafts and role_as is not None:
                role = _valid(_cut(role_as.group("role"), _STOP_PLACE), max_words=4)
                if role is not None:
                    drafts.append(
                        _Draft(
                            predicate="has_role",
                            value=role,
                            kind=kind,
                            subject_type=subject.type,
                            **base,
                        )
                    )
        elif key == "left":
            if negated:
                return []
            obj = _place(rest)
            if obj is None or (not groups.get("job") and not _is_capitalised(obj)):
                return []
            predicate, otype, conf = "works_at", ORG, _WEAK
            found: str = obj
            prior = self._lookup(
                st, lambda p: _same(p.target, found) and p.predicate in ("lives_in", "works_at")
            )
            if groups.get("job"):
                conf = _CONFIDENCE
            elif prior is not None:
                predicate, otype, conf = prior.predicate, prior.object_type, _CONFIDENCE
            drafts = [
                _Draft(
                    object=obj,
                    predicate=predicate,
                    object_type=otype,
                    kind="negate",
                    confidence=conf,
                    subject_type=subject.type,
                    **{**base, "negation": "ended"},
                )
            ]
        elif key in ("role_at", "work_as"):
            role = match.group("role") if key == "role_at" else None
            org_rest: str | None = rest
            if role is None:
                parts = re.split(r"\s+(?i:at|for|with)\s+", rest, maxsplit=1)
                role = _cut(parts[0], _STOP_THING)
                org_rest = parts[1] if len(parts) > 1 else None
            role_v = _valid(role, max_words=4)
            if role_v is None:
                return []
            drafts = [
                _Draft(
                    predicate="has_role", value=role_v, kind=kind, subject_type=subject.type, **base
                )
            ]
            if org_rest is not None:
                org = _place(org_rest)
                if org is not None:
                    drafts.append(
                        _Draft(
                            predicate="works_at",
                            object=org,
                            object_type=ORG,
                            kind=kind,
                            subject_type=subject.type,
                            **base,
                        )
                    )
        elif key in ("likes", "dislikes"):
            predicate = "likes" if key == "likes" else "dislikes"
            drafts = self._list_drafts(rest, predicate, kind, subject, base)
        elif key == "prefers":
            over = _OVER.search(_to_gerund(_squash(rest)))
            head = _to_gerund(_squash(rest))
            detail = None
            if over and not head.lower().startswith("to "):
                head = head[: over.start()]
                detail = _thing(over.group("y"))
            obj = _thing(head)
            if obj is None:
                return []
            drafts = [
                _Draft(
                    predicate="prefers",
                    object=obj,
                    kind=kind,
                    detail=detail,
                    subject_type=subject.type,
                    **base,
                )
            ]
        elif key == "uses":
            obj = _thing(rest, max_words=4)
            if obj is None:
                return []
            drafts = [
                _Draft(predicate="uses", object=obj, kind=kind, subject_type=subject.type, **base)
            ]
        elif key == "married":
            obj = _place(rest)
            if obj is None or not _is_capitalised(obj):
                return []
            drafts = [
                _Draft(
                    predicate="married_to",
                    object=obj,
                    object_type=PERSON,
                    kind=kind,
                    subject_type=subject.type,
                    **base,
                )
            ]
        elif key == "status":
            if not _task_like(subject):
                return []
            tail = _tidy(rest)
            if tail and not re.match(
                r"(?i:by|because|since|on|due|until|for|with|and|but)\b", tail
            ):
                return []
            status = _squash(match.group("status").lower())
            drafts = [
                _Draft(
                    predicate="has_status",
                    value=status,
                    kind=kind,
                    subject_type=subject.type,
                    **base,
                )
            ]
        elif key == "version":
            drafts = [
                _Draft(
                    predicate="uses_version",
                    value=_strip_v(match.group("ver")),
                    kind=kind,
                    subject_type=subject.type,
                    **base,
                )
            ]
        elif key == "is_a":
            obj = _thing(rest, max_words=4)
            if obj is None or obj.split()[0].lower() in (
                "bit",
                "little",
                "lot",
                "fan",
                "kind",
                "sort",
                "part",
                "couple",
                "few",
            ):
                return []
            drafts = [
                _Draft(predicate="is_a", object=obj, kind=kind, subject_type=subject.type, **base)
            ]
        for draft in drafts:
            draft.subject_type = _subject_type(subject, draft.predicate)
        return drafts

    def _with_corrections(
        self,
        rest: str,
        reader: Any,
        predicate: str,
        otype: str,
        kind: str,
        subject: _Subject,
        base: dict[str, Any],
        *,
        functional: bool,
    ) -> list[_Draft]:
        """Read the object, honouring "X, actually Y" and "Y, not X" inside the clause."""
        squashed = _squash(rest)
        self_fix = _SELF_CORRECTION.match(squashed)
        if self_fix and kind == "assert":
            new = reader(self_fix.group("new"))
            old = reader(self_fix.group("old"))
            if new is not None:
                return [
                    _Draft(
                        predicate=predicate,
                        object=new,
                        object_type=otype,
                        kind="correct",
                        replaces=old,
                        subject_type=subject.type,
                        **base,
                    )
                ]
        suffix = _NOT_SUFFIX.match(squashed)
        if suffix and kind == "assert":
            new = reader(suffix.group("new"))
            old = reader(suffix.group("old"))
            if new is not None and old is not None and not _same(new, old):
                if functional:
                    return [
                        _Draft(
                            predicate=predicate,
                            object=new,
                            object_type=otype,
                            kind="correct",
                            replaces=old,
                            subject_type=subject.type,
                            **base,
                        )
                    ]
                return [
                    _Draft(
                        predicate=predicate,
                        object=new,
                        object_type=otype,
                        kind="assert",
                        subject_type=subject.type,
                        **base,
                    ),
                    _Draft(
                        predicate=predicate,
                        object=old,
                        object_type=otype,
                        kind="negate",
                        subject_type=subject.type,
                        **{**base, "negation": "not"},
                    ),
                ]
        obj = reader(rest)
        if obj is None:
            return []
        return [
            _Draft(
                predicate=predicate,
                object=obj,
                object_type=otype,
                kind=kind,
                subject_type=subject.type,
                **base,
            )
        ]

    def _list_drafts(
        self, rest: str, predicate: str, kind: str, subject: _Subject, base: dict[str, Any]
    ) -> list[_Draft]:
        squashed = _squash(rest)
        suffix = _NOT_SUFFIX.match(squashed)
        negated_items: list[str] = []
        if suffix and kind == "assert":
            old = _thing(suffix.group("old"))
            if old is not None:
                negated_items.append(old)
                squashed = suffix.group("new")
        drafts = [
            _Draft(predicate=predicate, object=item, kind=kind, subject_type=subject.type, **base)
            for item in _things(squashed)
        ]
        if drafts:
            drafts.extend(
                _Draft(
                    predicate=predicate,
                    object=item,
                    kind="negate",
                    subject_type=subject.type,
                    **{**base, "negation": "not"},
                )
                for item in negated_items
            )
        return drafts

    def _pets(self, text: str, clause: _Clause, st: _State, found: list[_Draft]) -> list[_Draft]:
        if any(d.predicate == "has_pet" for d in found):
            return []
        if any(d.kind == "negate" for d in found):
            return []
        out: list[_Draft] = []
        for rx in (_PET_MY, _PET_HAVE, _PET_ALSO):
            if rx is _PET_ALSO and not out:
                break
            for match in rx.finditer(text):
                name = match.group("n")
                if name in _NAME_STOP or name in _NOT_NAMES:
                    continue
                if any(_same(d.target, name) for d in out):
                    continue
                out.append(
                    _Draft(
                        st.speaker,
                        PERSON,
                        "has_pet",
                        object=name,
                        subject_kind="fp",
                        detail=_squash(match.group("kind").lower()),
                    )
                )
        return out

    # ------------------------------------------------------------------ corrections
    def _contrast(self, text: str, st: _State) -> _Draft | None:
        """Form A ("X was never A, it was always B") and form B ("it's not A, it's B")."""
        stripped = text.strip().rstrip(".!")
        lower = stripped.lower()
        if "never" not in lower and "not" not in lower and "n't" not in lower:
            return None
        match = _NEVER_ALWAYS.match(stripped) if "never" in lower else None
        allow_is = True
        if match is None:
            match = _NOT_BUT.match(stripped)
            allow_is = False
            if match is None:
                return None
            if not match.group("mid") and "but" not in match.group("sep").lower():
                return None
        np = _squash(match.group("np"))
        if re.match(r"(?i:i|we)(?:\b|')", np) or re.match(r"(?i:i'm|i've|we're)", np):
            return None
        old = _contrast_value(match.group("old"))
        new = _contrast_value(match.group("new"))
        if old is None or new is None or _same(old, new):
            return None
        return self._resolve_contrast(np, old, new, st, allow_is=allow_is)

    def _resolve_contrast(
        self, np: str, old: str, new: str, st: _State, *, allow_is: bool
    ) -> _Draft | None:
        sp = st.speaker
        words = np.split()
        pronoun = not words or (len(words) == 1 and words[0].lower() in _PRONOUNS)
        old_bare = _ARTICLE.sub("", old)
        new_bare = _ARTICLE.sub("", new)

        def corrected(
            subject: str,
            stype: str,
            predicate: str,
            *,
            as_object: bool,
            otype: str = ENTITY,
            kind: str = "name",
        ) -> _Draft:
            if as_object:
                return _Draft(
                    subject,
                    stype,
                    predicate,
                    object=new_bare,
                    object_type=otype,
                    kind="correct",
                    replaces=old_bare,
                    subject_kind=kind,
                )
            value: Scalar = _strip_v(new) if predicate == "uses_version" else new
            replaces = _strip_v(old) if predicate == "uses_version" else old
            return _Draft(
                subject,
                stype,
                predicate,
                value=value,
                kind="correct",
                replaces=replaces,
                subject_kind=kind,
            )

        if pronoun:
            prior = self._lookup(st, lambda p: _same(p.target, old_bare) or _same(p.target, old))
            if prior is not None:
                return _from_prior(prior, old_bare, new_bare)
            if _IS_PATH.match(new):
                return corrected("endpoint", ENTITY, "has_endpoint", as_object=False, kind="np")
            if _IS_VERSION.match(new) and _IS_VERSION.match(old):
                return corrected("version", ENTITY, "uses_version", as_object=False, kind="np")
            return None
        lead = words[0].lower()
        if lead in ("my", "our") and len(words) > 1:
            noun = " ".join(words[1:])
            if _ENDPOINT_NOUN.fullmatch(" " + noun):
                return corrected(sp, PERSON, "has_endpoint", as_object=False, kind="fp")
            if _VERSION_NOUN.fullmatch(" " + noun):
                return corrected(sp, PERSON, "uses_version", as_object=False, kind="fp")
            predicate = _ATTRIBUTES.get(noun.lower()) or _snake(noun)
            if predicate is None:
                return None
            if predicate.startswith("favorite_") or predicate in ("works_at", "married_to"):
                return corrected(
                    sp,
                    PERSON,
                    predicate,
                    as_object=True,
                    otype=_OBJECT_TYPES.get(predicate, ENTITY),
                    kind="fp",
                )
            return corrected(sp, PERSON, predicate, as_object=False, kind="fp")
        name, _mine = _np_name(np, sp)
        if not name:
            return None
        kind = "np" if name[:1].islower() else "name"
        if _ENDPOINT_NOUN.search(name):
            owner = _ENDPOINT_NOUN.sub("", name).strip()
            return corrected(
                owner or "endpoint",
                ENTITY,
                "has_endpoint",
                as_object=False,
                kind="np" if not owner or owner[:1].islower() else "name",
            )
        if _VERSION_NOUN.search(name):
            owner = _VERSION_NOUN.sub("", name).strip()
            return corrected(
                owner or "version",
                ENTITY,
                "uses_version",
                as_object=False,
                kind="np" if not owner or owner[:1].islower() else "name",
            )
        if len(name.split()) > 5:
            return None
        prior = self._lookup(
            st,
            lambda p: (
                _same(p.subject, name) and (_same(p.target, old_bare) or _same(p.target, old))
            ),
        )
        if prior is not None:
            return _from_prior(prior, old_bare, new_bare)
        if _IS_PATH.match(new):
            return corrected(name, ENTITY, "has_endpoint", as_object=False, kind=kind)
        if _IS_VERSION.match(new) and _IS_VERSION.match(old):
            return corrected(name, ENTITY, "uses_version", as_object=False, kind=kind)
        if _IS_STATUS.match(new):
            return corrected(name, ENTITY, "has_status", as_object=False, kind=kind)
        if _ARTICLE.match(new) and _ARTICLE.match(old):
            return corrected(name, ENTITY, "is_a", as_object=True, kind=kind)
        if allow_is:
            draft = corrected(name, ENTITY, "is", as_object=False, kind=kind)
            draft.confidence = 0.6
            return draft
        return None

    def _bare_correction(self, text: str, st: _State) -> _Draft | None:
        """ "Sorry, I meant Lyon" / "Correction: Lyon, not Paris" → correct the last fact."""
        body = _BARE_LEAD.sub("", _squash(text).strip(" .!"))
        hint: str | None = None
        suffix = _NOT_SUFFIX.match(body)
        if suffix:
            body, hint = suffix.group("new"), _valid(suffix.group("old"))
        if re.match(r"(?i:i|we|my|our|you|he|she|they)\b", body):
            return None
        first = body.split()[0] if body.split() else ""
        new = first if _IS_PATH.match(first) else _valid(_cut(body, _STOP_THING))
        if new is None:
            return None
        prior: _Prior | None = None
        if hint is not None:
            prior = self._lookup(st, lambda p: _same(p.target, hint or ""))
        if prior is None:
            prior = self._lookup(st, lambda p: True, latest_only=True)
        if prior is None or _same(prior.target, new):
            return None
        draft = _from_prior(prior, prior.target, new)
        draft.confidence = 0.8
        return draft

    def _lookup(
        self, st: _State, want: Callable[[_Prior], bool], *, latest_only: bool = False
    ) -> _Prior | None:
        """The most recent known fact matching ``want``: this episode, previous, context.facts."""
        for draft in reversed(st.drafts):
            if draft.kind == "negate":
                continue
            prior = _Prior(
                draft.subject,
                draft.subject_type,
                draft.predicate,
                draft.target,
                draft.object is not None,
                draft.object_type,
                draft.value,
            )
            if want(prior):
                return prior
            if latest_only:
                return None
        for prior in self._previous(st):
            if want(prior):
                return prior
            if latest_only:
                return None
        if latest_only:
            return None
        for record in st.context.facts:
            if not record.is_current():
                continue
            is_object = record.object is not None
            stype = PERSON if record.subject == st.speaker else ENTITY
            prior = _Prior(
                record.subject,
                stype,
                record.predicate,
                record.target,
                is_object,
                _OBJECT_TYPES.get(record.predicate, ENTITY),
                record.value,
            )
            if want(prior):
                return prior
        return None

    def _previous(self, st: _State) -> list[_Prior]:
        """Facts of ``context.previous`` (newest episode first, last fact first), computed once."""
        if st.previous_cache is not None:
            return st.previous_cache
        out: list[_Prior] = []
        if st.use_previous and st.context.previous:
            sub = ExtractionContext(speaker=st.context.speaker, predicates=st.context.predicates)
            ordered = sorted(st.context.previous, key=lambda e: e.reference_time, reverse=True)
            for episode in ordered:
                for draft in reversed(self._drafts(episode, sub, use_previous=False)):
                    if draft.kind == "negate":
                        continue
                    out.append(
                        _Prior(
                            draft.subject,
                            draft.subject_type,
                            draft.predicate,
                            draft.target,
                            draft.object is not None,
                            draft.object_type,
                            draft.value,
                        )
                    )
        st.previous_cache = out
        return out


# ----------------------------------------------------------------------------- module helpers


def _task_like(subject: _Subject) -> bool:
    if subject.kind not in ("name", "np"):
        return False
    if any(ch.isdigit() for ch in subject.name):
        return True
    return any(word.lower().strip(".") in _TASK_WORDS for word in subject.name.split())


def _subject_type(subject: _Subject, predicate: str) -> str:
    if subject.kind in ("fp", "kin"):
        return PERSON
    if subject.kind == "name" and (
        predicate in _HUMAN_PREDICATES or predicate.startswith("favorite_")
    ):
        return PERSON
    return ENTITY


def _from_prior(prior: _Prior, old: str, new: str) -> _Draft:
    if prior.is_object:
        return _Draft(
            prior.subject,
            prior.subject_type,
            prior.predicate,
            object=new,
            object_type=prior.object_type,
            kind="correct",
            replaces=prior.target,
            subject_kind="name",
        )
    value: Scalar = new
    if isinstance(prior.value, int) and not isinstance(prior.value, bool) and new.isdigit():
        value = int(new)
    elif prior.predicate == "uses_version":
        value = _strip_v(new)
    return _Draft(
        prior.subject,
        prior.subject_type,
        prior.predicate,
        value=value,
        kind="correct",
        replaces=prior.target,
        subject_kind="np" if prior.subject[:1].islower() else "name",
    )


def _episode_text(episode: EpisodeRecord) -> str | None:
    if episode.kind not in ("message", "text"):
        return None
    content = episode.content
    head = content.lstrip()[:1]
    if episode.kind == "message" and head in ("{", "["):
        try:
            data = json.loads(content)
        except ValueError:
            return content
        return _json_text(data)
    return content


def _json_text(data: Any) -> str | None:
    if isinstance(data, dict):
        role = str(data.get("role", "user")).lower()
        if role in ("assistant", "system", "tool", "function", "ai", "bot"):
            return None
        body = data.get("content", data.get("text"))
        return body if isinstance(body, str) else None
    if isinstance(data, list):
        parts = [t for t in (_json_text(item) for item in data) if t]
        return "\n".join(parts) if parts else None
    return None


_SPEAKER_LINE = re.compile(r"^\s*(?P<who>[A-Za-z][\w .'-]{0,30}?)\s*:\s+(?P<text>\S.*)$")
_ROLE_USER = frozenset({"user", "human", "me", "customer", "client"})
_ROLE_BOT = frozenset({"assistant", "ai", "bot", "system", "agent", "model", "tool"})
_NOT_SPEAKER = _wordset(
    "note todo update correction fyi ps edit reminder summary context question answer q a tip "
    "warning important re subject date time from to cc status endpoint url version actually "
    "sorry oops btw ok okay nb info title name email phone address"
)


def _segments(text: str, speaker: str) -> list[tuple[str, str]]:
    """(speaker, text) parts: a ``Name: text`` transcript is read line by line."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) == 1:
        single = _SPEAKER_LINE.match(lines[0])
        if single is not None and _squash(single.group("who")).lower() in _ROLE_USER | _ROLE_BOT:
            if _squash(single.group("who")).lower() in _ROLE_BOT:
                return []
            return [(speaker, single.group("text"))]
    if len(lines) >= 2:
        parsed = [_SPEAKER_LINE.match(line) for line in lines]
        matches = [m for m in parsed if m is not None]
        if len(matches) == len(lines):
            labels = [_squash(m.group("who")).lower() for m in matches]
            known = _ROLE_USER | _ROLE_BOT
            if not any(label in _NOT_SPEAKER for label in labels) and (
                len(set(labels)) >= 2 or any(label in known for label in labels)
            ):
                out: list[tuple[str, str]] = []
                for m, label in zip(matches, labels, strict=True):
                    if label in _ROLE_BOT:
                        continue
                    who = speaker if label in _ROLE_USER else _squash(m.group("who"))
                    out.append((who, m.group("text")))
                return out
    return [(speaker, text)]


def _sentences(text: str) -> list[tuple[str, str]]:
    """(sentence, terminator) pairs; the terminator is '?' for questions, '!' , '.' or ''."""
    out: list[tuple[str, str]] = []
    start = 0
    for match in _SENT_END.finditer(text):
        mark = match.group()
        if mark == ".":
            word = _LAST_WORD.search(text[start : match.start()])
            if word:
                token = word.group(1)
                if token.lower().rstrip(".") in _ABBREV or (len(token) == 1 and token.isupper()):
                    continue
        piece = text[start : match.start()]
        end = "?" if "?" in mark else ("!" if "!" in mark else ("." if "." in mark else ""))
        if piece.strip():
            out.append((piece, end))
        start = match.end()
    tail = text[start:]
    if tail.strip():
        out.append((tail, ""))
    return out


def _merge_contrasts(sentences: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Join "It was never A. It was always B." into one sentence when it forms a correction."""
    out: list[tuple[str, str]] = []
    index = 0
    while index < len(sentences):
        text, end = sentences[index]
        if index + 1 < len(sentences) and end != "?" and _CONTRAST_HEAD.search(text):
            nxt, nxt_end = sentences[index + 1]
            if _CONTRAST_TAIL.match(nxt):
                joined = text.rstrip() + (end or ",") + " " + nxt.strip()
                body = _strip_lead(joined)[0].strip()
                if _NEVER_ALWAYS.match(body) or _NOT_BUT.match(body):
                    out.append((joined, nxt_end))
                    index += 2
                    continue
        out.append((text, end))
        index += 1
    return out


def _declarative_head(text: str) -> str | None:
    """ "I live in Osaka, what about you?" → "I live in Osaka"; a real question → None."""
    for match in reversed(list(re.finditer(r",\s*|\s[-–—]+\s", text))):
        head, tail = text[: match.start()], text[match.end() :]
        if (
            _QUESTION_TAIL.match(tail)
            and head.strip()
            and not _QUESTION_START.match(_strip_lead(head)[0])
        ):
            return head
    return None


def _clauses(text: str, ref: datetime) -> list[_Clause]:
    """Split a sentence into clauses, with time phrases resolved and blanked out."""
    work = list(text)
    times: list[tuple[int, datetime | None, bool]] = []
    for match in _TIME.finditer(text):
        resolved, is_future = _resolve_time(match, ref)
        times.append((match.start(), resolved, is_future))
        work[match.start() : match.end()] = " " * (match.end() - match.start())
    blanked = "".join(work)
    blanked = _TIME_FILLER_LOWER.sub(lambda m: " " * len(m.group()), blanked)
    # (text start, text end, inherits subject, region end): a time phrase belongs to the clause
    # whose region holds it; regions end at the separator's comma or conjunction word.
    spans: list[tuple[int, int, bool, int]] = []
    start = 0
    inherit = False
    for sep in _SEP.finditer(blanked):
        follow = _CLAUSE_START.match(blanked, sep.end())
        if follow is None:
            continue
        raw = sep.group()
        pivot = sep.start() + (len(raw) - len(raw.lstrip()))
        spans.append((start, sep.start(), inherit, pivot))
        start = sep.end()
        inherit = bool(follow.group("verb"))
    spans.append((start, len(blanked), inherit, len(blanked)))
    clauses: list[_Clause] = []
    carried: datetime | None = None
    carried_future = False
    region_lo = 0
    for lo, hi, inh, region_hi in spans:
        when = None
        future = False
        for pos, t, fut in times:
            if region_lo <= pos < region_hi:
                future = future or fut
                if when is None and t is not None:
                    when = t
        region_lo = region_hi
        piece = blanked[lo:hi]
        if not _WORD.search(_strip_lead(piece)[0]):
            if when is not None or future:
                carried, carried_future = when, future
            continue
        if when is None and carried is not None:
            when = carried
        future = future or carried_future
        carried, carried_future = None, False
        evidence = _squash(text[lo : region_hi if region_hi > hi else hi]).strip(" ,;:.!")
        clauses.append(_Clause(piece, evidence, when, future, inh))
    return clauses


def _pair_never_always(drafts: list[_Draft], start: int) -> None:
    """ "I never lived in Paris, I've always lived in Lyon" → one correction."""
    window = drafts[start:]
    for neg in [d for d in window if d.kind == "negate" and d.never]:
        for pos in window:
            if (
                pos.kind in ("assert", "correct")
                and pos.always
                and pos.predicate == neg.predicate
                and _same(pos.subject, neg.subject)
                and not _same(pos.target, neg.target)
            ):
                pos.kind = "correct"
                pos.replaces = neg.target
                drafts.remove(neg)
                break


def _finish(drafts: list[_Draft]) -> list[_Draft]:
    """Fold same-episode corrections into the facts they replace, and drop duplicates."""
    out: list[_Draft] = []
    for draft in drafts:
        if draft.kind == "correct":
            for earlier in list(out):
                if earlier.kind != "assert" or earlier.predicate != draft.predicate:
                    continue
                if not _same(earlier.subject, draft.subject) or _same(earlier.target, draft.target):
                    continue
                if draft.replaces is None or _same(draft.replaces, earlier.target):
                    draft.replaces = earlier.target
                    if draft.valid_from is None:
                        draft.valid_from = earlier.valid_from
                    out.remove(earlier)
        key = (_key(draft.subject), draft.predicate, _key(draft.target), draft.kind)
        if any((_key(d.subject), d.predicate, _key(d.target), d.kind) == key for d in out):
            continue
        out.append(draft)
    return out


_TEMPLATES: dict[str, tuple[str, str, str]] = {
    "lives_in": ("{s} lives in {o}.", "{s} no longer lives in {o}.", "{s} does not live in {o}."),
    "works_at": ("{s} works at {o}.", "{s} no longer works at {o}.", "{s} does not work at {o}."),
    "has_role": (
        "{s} works as {ao}.",
        "{s} no longer works as {ao}.",
        "{s} does not work as {ao}.",
    ),
    "likes": ("{s} likes {o}.", "{s} no longer likes {o}.", "{s} does not like {o}."),
    "dislikes": ("{s} dislikes {o}.", "{s} no longer dislikes {o}.", "{s} does not dislike {o}."),
    "prefers": ("{s} prefers {o}.", "{s} no longer prefers {o}.", "{s} does not prefer {o}."),
    "is_a": ("{s} is {ao}.", "{s} is no longer {ao}.", "{s} is not {ao}."),
    "has_pet": (
        "{s} has a pet named {o}.",
        "{s} no longer has a pet named {o}.",
        "{s} does not have a pet named {o}.",
    ),
    "has_status": ("{s} is {o}.", "{s} is no longer {o}.", "{s} is not {o}."),
    "uses_version": (
        "{s} is on version {o}.",
        "{s} is no longer on version {o}.",
        "{s} is not on version {o}.",
    ),
    "has_endpoint": (
        "The endpoint of {s} is {o}.",
        "The endpoint of {s} is no longer {o}.",
        "The endpoint of {s} is not {o}.",
    ),
    "uses": ("{s} uses {o}.", "{s} no longer uses {o}.", "{s} does not use {o}."),
    "name": ("{ps} name is {o}.", "{ps} name is no longer {o}.", "{ps} name is not {o}."),
    "age": (
        "{s} is {o} years old.",
        "{s} is no longer {o} years old.",
        "{s} is not {o} years old.",
    ),
    "married_to": (
        "{s} is married to {o}.",
        "{s} is no longer married to {o}.",
        "{s} is not married to {o}.",
    ),
    "is": ("{s} is {o}.", "{s} is no longer {o}.", "{s} is not {o}."),
    "has_manager": (
        "{ps} manager is {o}.",
        "{ps} manager is no longer {o}.",
        "{ps} manager is not {o}.",
    ),
}
for _word, _predicate in _RELATIONS.items():
    if _predicate == _word + "_of":  # sister_of: "Ana is Maya's sister."
        _TEMPLATES[_predicate] = (
            f"{{s}} is {{o}}'s {_word}.",
            f"{{s}} is no longer {{o}}'s {_word}.",
            f"{{s}} is not {{o}}'s {_word}.",
        )


def _statement(d: _Draft) -> str:
    subject = d.subject
    if d.subject_kind == "np" and subject[:1].islower():
        subject = "the " + subject
    target = d.target
    if d.predicate == "has_endpoint" and d.subject == "endpoint":
        templates = (
            "The endpoint is {o}.",
            "The endpoint is no longer {o}.",
            "The endpoint is not {o}.",
        )
    elif d.predicate == "uses_version" and d.subject == "version":
        templates = (
            "The version is {o}.",
            "The version is no longer {o}.",
            "The version is not {o}.",
        )
    elif d.predicate == "has_pet" and d.detail:
        pet = _article(d.detail)
        templates = (
            f"{{s}} has {pet} named {{o}}.",
            f"{{s}} no longer has {pet} named {{o}}.",
            f"{{s}} does not have {pet} named {{o}}.",
        )
    elif d.predicate in _TEMPLATES:
        templates = _TEMPLATES[d.predicate]
    else:
        words = d.predicate.replace("_", " ")
        templates = (
            f"{{ps}} {words} is {{o}}.",
            f"{{ps}} {words} is no longer {{o}}.",
            f"{{ps}} {words} is not {{o}}.",
        )
    index = 0 if d.kind != "negate" else (1 if d.negation == "ended" else 2)
    text = templates[index].format(
        s=subject, o=target, ao=_article(target) if target else "", ps=subject + "'s"
    )
    if d.predicate == "prefers" and d.detail and d.kind != "negate":
        text = text[:-1] + f" over {d.detail}."
    return text[:1].upper() + text[1:]


_HAS_FUNCTIONAL_HINT = "functional" in ExtractedFact.model_fields


def _to_fact(d: _Draft, coined: bool) -> ExtractedFact:
    """The public fact; predicates this extractor coins (favorite_*, is, my <attribute>) are
    single-valued attributes, so they carry a ``functional`` hint for the registry."""
    extra: dict[str, Any] = {}
    if coined and _HAS_FUNCTIONAL_HINT:
        extra["functional"] = True
    return ExtractedFact(
        subject=d.subject,
        predicate=d.predicate,
        object=d.object,
        value=d.value if d.object is None else None,
        statement=_statement(d),
        subject_type=d.subject_type,
        object_type=d.object_type if d.object is not None else ENTITY,
        valid_from=d.valid_from,
        kind="negate" if d.kind == "negate" else ("correct" if d.kind == "correct" else "assert"),
        replaces=d.replaces,
        evidence=d.evidence or None,
        confidence=d.confidence,
        **extra,
    )


def _entities(drafts: list[_Draft]) -> list[ExtractedEntity]:
    out: list[ExtractedEntity] = []
    seen: set[tuple[str, str]] = set()
    for d in drafts:
        pairs = [(d.subject, d.subject_type)]
        if d.object is not None:
            pairs.append((d.object, d.object_type))
        for name, etype in pairs:
            key = (_key(name), etype)
            if key not in seen:
                seen.add(key)
                out.append(ExtractedEntity(name=name, type=etype))
    return out
