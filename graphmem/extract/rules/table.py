"""The rules extractor's pattern table: what each pattern reads and what fact it produces.

Data, not behaviour. Three tables, each read in order by ``_rule_engine`` / ``_rule_clauses``:

- ``CLAUSE_PATTERNS``: whole-clause shapes tried first ("my name is X", "X is my sister",
  "the endpoint is /v2"), each with a cheap guard so that most clauses run no regex at all;
- ``TRIGGERS``: the verb phrases of the clause grammar ``SUBJECT MODIFIERS* TRIGGER OBJECT``,
  each naming its predicate, which subjects it accepts and how its object is read (``form``);
- the correction shapes ("X was never A, it was always B", "Y, not X", "X, actually Y").

Order matters in every table: the first entry that applies wins, so a more specific pattern
comes before a more general one ("a pilot for Delta" → has_role + works_at before "a pilot" →
is_a).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .words import (
    _ATTRIBUTES,
    _KIN,
    _MODIFIERS,
    _PETS,
    _RELATIONS,
    _STATUS,
    ENTITY,
    ORG,
    PERSON,
    PLACE,
    _alternation,
)

# ----------------------------------------------------------------------------- modifiers

# One modifier word after the subject ("I [don't] [really] like X"); the engine collects them
# until a trigger matches, then reads the fact's kind from their classes.
_MOD = re.compile(
    r"(?:\s+|(?='))(?P<m>" + _alternation(_MODIFIERS) + r")(?=\s|$|[,.;:!?])", re.I
)

# ----------------------------------------------------------------------------- subjects

# The clause subject: first person (I/we), "my <kin|pet> [Name]", a determiner noun phrase before
# "is/was/runs…" (status and version facts: "the build is broken"), or a capitalised name.
_SUBJECT = re.compile(
    r"(?P<fp>(?i:i|we)(?=\b|'))"
    r"|(?i:my|our)\s+(?:(?P<kin>(?i:" + _KIN + r"))|(?P<pet>(?i:" + _PETS + r")))"
    r"(?:\s*,?\s+(?P<kname>(?!I\b)[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)(?=\s*,?\s|'))?(?![\w'])"
    r"|(?P<np>(?i:the|our|my|this|that|its|their)\s+[A-Za-z][\w.-]*(?:\s+[A-Za-z][\w.-]*){0,2}?)"
    r"(?=\s+(?i:is|was|has|are|were|runs|uses|got|just|now|still|has\s+been)\b|')"
    r"|(?P<name>[A-Z][\w&.-]*(?:\s+(?:(?:of|de|van|von|da|del|du|la|le)\s+)?[A-Z0-9][\w&.-]*){0,3})"
)

# ----------------------------------------------------------------------------- triggers


@dataclass(frozen=True)
class Trigger:
    """One verb phrase: the fact it produces and how the engine reads its object.

    ``form`` names the engine's object reader: ``place`` (a name span, with "X, actually Y" and
    "Y, not X" inside the clause), ``list`` (one fact per item), ``thing`` (a short lowercase or
    capitalised span), ``named`` (a capitalised name), ``role`` (a job title, and "at X" as
    works_at), ``prefers`` ("X over Y"), ``left`` (employer or home, decided by known facts),
    ``status`` and ``version`` (the value is a group of the trigger itself).
    """

    rx: re.Pattern[str]
    form: str
    predicate: str
    subjects: frozenset[str]  # subject kinds it accepts: fp, name, kin, pet, np
    needs_be: bool = False  # "I'm into X" needs the "be"; "I into X" is not a sentence
    object_type: str = ENTITY
    max_words: int = 6
    ends: bool = False  # "moved out of X": always a negation ("ended")
    move: bool = False  # a move is news, never a correction ("actually I moved to Lyon")
    also_role: bool = False  # "I work at X as a <role>" gives has_role too
    # "joined X"/"started at X" need a capitalised X ("joined a gym" is no employer);
    # "got a job at x" does not.
    named_when: re.Pattern[str] | None = None
    reject_first: frozenset[str] = frozenset()  # object first words that make it no fact


_P = frozenset({"fp", "name", "kin"})
_THIRD = frozenset({"name", "kin", "pet", "np"})
_SEP0 = r"(?:\s+|(?='))"
_ROLE = (
    r"(?P<role>(?!(?:big|huge|great|massive|real|total)?\s*fan\b)"
    r"[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)"
)


def _t(body: str, form: str, predicate: str, subjects: frozenset[str], *, needs_be: bool = False,
       object_type: str = ENTITY, max_words: int = 6, ends: bool = False, move: bool = False,
       also_role: bool = False, named_when: str | None = None,
       reject_first: frozenset[str] = frozenset()) -> Trigger:
    rx = re.compile(_SEP0 + "(?:" + body + r")(?=\s|$|[,.;:!?])", re.I)
    return Trigger(rx, form, predicate, subjects, needs_be, object_type, max_words, ends, move,
                   also_role, None if named_when is None else re.compile(named_when),
                   reject_first)


# A (?P<past>…) group marks a simple past: "I lived in Paris" is not known to hold now, so it
# gives a fact only with "have"/a negation ("I've lived", "I never lived").
TRIGGERS: tuple[Trigger, ...] = (
    # "I'd rather X" as one phrase, so that its "'d" is not read as a modal (which gives no fact).
    _t(r"(?:'d|would)\s+(?:much\s+)?(?:prefer|rather(?:\s+have)?)", "prefers", "prefers", _P),
    _t(r"(?:can't|cannot|can\s+not)\s+stand|hate|hates|dislike|dislikes|detest|"
       r"detests|loathe|loathes|(?P<past>hated|disliked|detested|loathed)", "list", "dislikes", _P),
    # "I left X": X is an employer unless a known fact says the speaker lived there; "left"
    # before a gerund ("left cooking to Bob") is no leaving. "my job at" makes it certain.
    _t(r"(?:left|quit|resigned\s+from|retired\s+from|laid\s+off\s+(?:from|by)|"
       r"fired\s+from)(?!\s+\w+ing\b)(?P<job>\s+my\s+(?:job|position|role|post)\s+(?:at|with))?",
       "left", "works_at", _P, object_type=ORG),
    # Before "moved to": "moved out of X" ends the old home.
    _t(r"(?:moved|move)\s+(?:out\s+of|away\s+from)", "place", "lives_in", _P,
       object_type=PLACE, ends=True),
    _t(r"(?:moved|relocated)\s+(?:(?:back|over|here|permanently)\s+)?(?:from\s+.+?\s+)?to",
       "place", "lives_in", _P, object_type=PLACE, move=True),
    _t(r"(?:live|lives|living|reside|resides|residing|(?P<past>lived|resided))\s+(?:in|at)",
       "place", "lives_in", _P, object_type=PLACE),
    _t(r"based\s+(?:in|out\s+of)", "place", "lives_in", _P, needs_be=True, object_type=PLACE),
    _t(r"(?:a\s+(?:big\s+|huge\s+|great\s+|massive\s+|real\s+|total\s+)?fan\s+of|"
       r"(?<!got\s)(?<!get\s)(?<!gets\s)into|crazy\s+about|passionate\s+about|obsessed\s+with|fond\s+of|keen\s+on|"
       r"a\s+(?:big\s+)?lover\s+of)", "list", "likes", _P, needs_be=True),
    # "I'm a nurse at X" (a role needs an employer: bare "I'm a nurse" could be anything).
    _t(r"(?:a|an)\s+" + _ROLE + r"\s+(?:at|for|with)", "role", "has_role", _P, needs_be=True),
    _t(r"(?:work|works|working|(?P<past>worked))\s+as\s+(?:a|an)", "role", "has_role", _P),
    _t(r"(?:work|works|working|(?P<past>worked))\s+(?:at|for)", "place", "works_at", _P,
       object_type=ORG, also_role=True),
    _t(r"joined|started\s+(?:at|with)|started\s+(?:a\s+)?(?:new\s+)?(?:job|position|"
       r"role)\s+(?:at|with)|got\s+(?:a\s+)?(?:new\s+)?(?:job|position|role)\s+(?:at|with)|"
       r"hired\s+(?:at|by)|employed\s+(?:at|by)", "place", "works_at", _P, object_type=ORG,
       also_role=True, named_when=r"\s*(?i:joined|started)"),
    _t(r"like|likes|liking|love|loves|loving|enjoy|enjoys|enjoying|adore|adores|"
       r"(?P<past>liked|loved|enjoyed|adored)", "list", "likes", _P),
    _t(r"prefer|prefers|preferring", "prefers", "prefers", _P),
    # Only people use tools: "my dog uses the garden" is no uses fact.
    _t(r"use|uses|using", "thing", "uses", frozenset({"fp", "name"}), max_words=4),
    _t(r"married\s+to", "named", "married_to", _P | {"name"}, needs_be=True,
       object_type=PERSON),
    _t(r"(?P<status>" + _STATUS + r")", "status", "has_status", _THIRD, needs_be=True),
    _t(r"(?:on|at|running|using)\s+(?:version\s+|v(?=\d))?(?P<ver>v?\d[\w.+-]*)", "version",
       "uses_version", _THIRD, needs_be=True),
    _t(r"(?:runs|uses|running|using)\s+(?:version\s+|v(?=\d))(?P<ver>v?\d[\w.+-]*)",
       "version", "uses_version", _THIRD),
    # Last: "a/an" after "is" is the most general shape, tried after "a <role> at/for X".
    # "Rex is a bit shy" is no is_a.
    _t(r"(?:a|an)", "thing", "is_a", frozenset({"name", "kin", "pet"}), needs_be=True,
       max_words=4, reject_first=frozenset({"bit", "little", "lot", "fan", "kind", "sort",
                                            "part", "couple", "few"})),
)

# ----------------------------------------------------------------------------- whole clauses


@dataclass(frozen=True)
class ClausePattern:
    """A whole-clause shape: the first of ``rxs`` that matches is read by ``reader``.

    ``when`` names a cheap test on the clause (see ``_rule_clauses.probe``) that must hold before
    any regex runs. A reader may decline a match (return None): the next pattern is tried.
    """

    reader: str
    predicate: str  # what it produces; "" when the reader derives it (favorite_<thing>, …)
    rxs: tuple[re.Pattern[str], ...]
    when: str


_VERSION_TOKEN = r"v?\d+(?:\.\d+)*(?:[-+][\w.]+)?(?:\.x)?"
_TECH = r"[A-Za-z][\w.+#-]*(?:\s+(?!version\b)[A-Z][\w.+#-]*){0,2}"
# "we use Postgres 15", "we're on Django 4.2", "I upgraded to Node v20".
_FP_VERSION = re.compile(
    r"(?:i|we)(?:'re|'m|'ve|\s+are|\s+am|\s+have)?\s+(?:(?:now|currently|still|already|just|all)\s+)*"
    r"(?:use|using|run|running|on|upgraded\s+to|migrated\s+to|switched\s+to|moved\s+to|"
    r"deploy|deploying|updated\s+to)\s+(?P<x>" + _TECH + r")\s+(?:version\s+|v(?=\d))?"
    r"(?P<ver>" + _VERSION_TOKEN + r")(?=\s|$|[,.;:!?])",
    re.I,
)
# "the API is on version 3", "the server runs version 2.1", "the app version is v5".
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
# "the version is 2.1": no owner, so the subject is the literal noun "version".
_BARE_VERSION = re.compile(
    r"(?:the\s+|our\s+)?version\s+(?:is|'s|=|:)\s+(?:now\s+)?(?P<ver>" + _VERSION_TOKEN + r")"
    r"(?=\s|$|[,.;:!?])",
    re.I,
)
# "the (billing) endpoint (for X) is /v2/…": the owner is the noun phrase or the "for X".
_ENDPOINT = re.compile(
    r"(?P<np>(?:(?:the|our|my|its|their|your|this|that|new|current)\s+)*(?:[\w.-]+\s+){0,3}?)"
    r"(?P<noun>(?:endpoint|end\s*point|base\s+url|url|route|api\s+path|path))"
    r"(?:\s+(?:for|of)\s+(?P<owner>[\w.\s-]{1,40}?))?"
    r"\s*(?:is|'s|=|:|is\s+now|has\s+changed\s+to|changed\s+to|has\s+moved\s+to|moved\s+to|"
    r"is\s+still)\s+(?P<neg>(?:no\s+longer|not)\s+)?(?:now\s+)?(?:at\s+)?"
    r"(?P<path>(?:https?://|/)\S*)",
    re.I,
)
# "(Hi,) I'm Sam": only at the start of a message, or "I'm tired" would be a name.
_INTRO = re.compile(
    r"(?i:i'm|i\s+am|im)\s+(?P<n>[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?)"
    r"(?:\s+(?i:here|from\s+.+))?\s*[.!,]*\s*$"
)
# "(you can) call me Jo": the whole clause, so "call me when you land" is no name.
_CALL_ME = re.compile(
    r"(?i:(?:you\s+can\s+|please\s+|just\s+)?call\s+me)\s+"
    r"(?P<n>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s*[.!,]*\s*$"
)
# "my name is Sam (and …)": the name may start lowercase in chat ("my name is sam").
_MY_NAME = re.compile(
    r"(?i:my\s+name(?:'s|\s+is)\s+(?:now\s+|actually\s+)?)"
    r"(?P<n>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})\s*[.!,]*\s*(?:$|,|(?i:and|but)\b)"
)
# "my favorite <thing> is X" → favorite_<thing>; "Maya's favourite film is Alien" too.
_FAVORITE = re.compile(
    r"(?:(?i:my|our)|(?P<owner>[A-Z][\w-]*)'s)\s+(?i:all[- ]time\s+)?"
    r"(?i:favorite|favourite|fave|fav)\s+(?P<t>(?i:[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}?))\s*"
    r"(?i:is|are|'s|has\s+always\s+been|is\s+still|will\s+always\s+be)\s+"
    r"(?P<neg>(?i:no\s+longer|not)\s+)?(?P<rest>.+)"
)
# "X is my favorite <thing>".
_FAVORITE_REV = re.compile(
    r"(?P<x>.+?)\s+(?i:is|are)\s+(?i:still\s+|definitely\s+|probably\s+)?(?i:my|our)\s+"
    r"(?i:all[- ]time\s+)?(?i:favorite|favourite|fave)\s+"
    r"(?P<t>(?i:[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}))"
    r"\s*[.!]*\s*$"
)
# "my email/phone/job title/employer/wife is X": the attribute noun names the predicate.
_MY_ATTRIBUTE = re.compile(
    r"(?i:my)\s+(?P<attr>(?i:" + _alternation(_ATTRIBUTES) + r"))(?:'s|\s+is)\s+"
    r"(?P<neg>(?i:no\s+longer|not)\s+)?(?P<rest>.+)"
)
# "Osaka is where I live": the object comes first, so the grammar cannot read it.
_WHERE_I_LIVE = re.compile(
    r"(?P<x>.+?)\s+(?i:is\s+where\s+(?:i|we)\s+(?:(?:now|currently|still)\s+)?live)\b"
)
# "my dog's name is Rex".
_PET_NAME_IS = re.compile(
    r"(?i:my|our)\s+(?P<kind>(?i:" + _PETS + r"))(?:'s)?\s+(?i:name(?:'s|\s+is))\s+"
    r"(?P<n>[A-Z][a-z'-]+)\b"
)
# "I'm 34 (years old)", "I just turned 40": the whole clause, so "I'm 2 hours late" is no age.
_AGE = re.compile(
    r"(?i:i'm|i\s+am|i\s+just\s+turned|i\s+turned|i've\s+just\s+turned)\s+(?P<n>\d{1,3})"
    r"(?i:\s+years?\s+old|\s+y/?o)?\s*[.!]*\s*$"
)
# The relation nouns of ``_RELATIONS``, longest first ("grandmother" before "mother").
_REL = r"(?i:" + "|".join(sorted(_RELATIONS, key=len, reverse=True)) + r")"
_REL_NAME = r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?"
# "Ana is my sister", "Ana is my cousin, not my sister" (a correction of the relation).
_RELATION_IS = re.compile(
    r"(?P<n>" + _REL_NAME + r")\s+(?i:is|'s)\s+(?:(?i:actually|really|now|still|also|in\s+fact)"
    r"\s+)?(?i:my|our)\s+(?:(?i:new|current)\s+)?(?P<rel>" + _REL + r")"
    r"(?:\s*,?\s+(?i:and\s+)?(?i:not)\s+(?i:my|our)\s+(?P<old>" + _REL + r"))?\s*[.!]*\s*$"
)
# "my sister is Ana".
_MY_RELATION_IS = re.compile(
    r"(?i:my|our)\s+(?:(?i:new|current)\s+)?(?P<rel>" + _REL + r")\s+(?i:is|'s)\s+"
    r"(?:(?i:now|actually|still)\s+)?(?P<n>" + _REL_NAME + r")\s*[.!]*\s*$"
)

CLAUSE_PATTERNS: tuple[ClausePattern, ...] = (
    ClausePattern("speaker_name", "name", (_INTRO,), "at_start"),
    ClausePattern("speaker_name", "name", (_CALL_ME,), "call_me"),
    ClausePattern("stated_name", "name", (_MY_NAME,), "mine"),
    ClausePattern("age", "age", (_AGE,), "digits"),
    ClausePattern("pet_name", "has_pet", (_PET_NAME_IS,), "mine_name"),
    ClausePattern("favorite", "", (_FAVORITE,), "fav"),
    ClausePattern("favorite_rev", "", (_FAVORITE_REV,), "fav"),
    # One entry, two shapes: when "X is my sister" matches with a non-name X, "my sister is X"
    # is not tried either.
    ClausePattern("relation", "", (_RELATION_IS, _MY_RELATION_IS), "my_anywhere"),
    ClausePattern("attribute", "", (_MY_ATTRIBUTE,), "mine"),
    ClausePattern("where_i_live", "lives_in", (_WHERE_I_LIVE,), "where"),
    ClausePattern("endpoint", "has_endpoint", (_ENDPOINT,), "slash"),
    ClausePattern("fp_version", "uses_version", (_FP_VERSION,), "digits"),
    ClausePattern("bare_version", "uses_version", (_BARE_VERSION,), "digits"),
    ClausePattern("np_version", "uses_version", (_NP_VERSION,), "digits"),
)

# ----------------------------------------------------------------------------- pets

# "my dog Rex", "I have a cat named Tom", "… and a dog named Bo" (only after one of the first
# two matched): each gives has_pet, read anywhere in the clause.
_PET_MY = re.compile(
    r"(?<![\w'])(?i:my|our)\s+(?:(?i:little|new|old|sweet|lovely|beloved|good|big|baby)\s+)?"
    r"(?P<kind>(?i:" + _PETS + r"))(?:\s*,\s*|\s+)(?:(?i:named|called)\s+)?(?P<n>[A-Z][a-z'-]+)\b"
)
_PET_ALSO = re.compile(
    r"\b(?i:and|also|plus)\s+(?:(?i:a|an|one|two|another)\s+)?(?:[a-z-]+\s+){0,2}?"
    r"(?P<kind>(?i:" + _PETS + r"))\s+(?i:named|called)\s+(?P<n>[A-Z][a-z'-]+)\b"
)
_PET_HAVE = re.compile(
    r"(?<![\w'])(?i:i|we)(?:\s+(?i:also|just|now|still))?\s*(?i:\s+have|'ve\s+got|\s+have\s+got|"
    r"\s+got|\s+own|\s+adopted|'ve\s+adopted|\s+have\s+adopted)\s+"
    r"(?:(?i:a|an|one|two|this)\s+)?(?:[a-z-]+\s+){0,2}?(?P<kind>(?i:" + _PETS + r"))\s+"
    r"(?i:named|called)\s+(?P<n>[A-Z][a-z'-]+)\b"
)
PET_PATTERNS: tuple[re.Pattern[str], ...] = (_PET_MY, _PET_HAVE, _PET_ALSO)

# ----------------------------------------------------------------------------- corrections

# "... at X as a <role>" after a works_at trigger.
_AS_ROLE = re.compile(r"\s(?i:as)\s+(?i:a|an)\s+(?P<role>[A-Za-z][\w\s-]*)")
# Inside a clause: "I live in Paris, actually Lyon" → correct; "I live in Lyon, not Paris" →
# correct (functional predicates) or assert + negate (others).
_SELF_CORRECTION = re.compile(
    r"(?P<old>[^,]+?)\s*,?\s+(?i:actually|sorry|i\s+mean|i\s+meant|no\s+wait|wait)\s*,?\s+"
    r"(?P<new>.+)$"
)
# The same "not" shape ends a bare correction: "Correction: Lyon, not Paris".
_NOT_SUFFIX = re.compile(
    r"(?P<new>[^,]+?)\s*,?\s+(?i:and\s+)?(?i:not)\s+(?i:in\s+|at\s+|to\s+|for\s+)?(?P<old>.+)$"
)
# "I prefer tea over coffee": the "over Y" is kept as the statement's detail, not a fact.
_OVER = re.compile(r"\s+(?i:over|to|rather\s+than|instead\s+of|more\s+than|than)\s+(?P<y>.+)$")
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
