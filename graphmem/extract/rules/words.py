"""The rules extractor's vocabulary: entity types, word lists and modifier classes.

Plain data, no behaviour: the patterns of ``_rule_table`` are built from these lists, and the
object readers of ``_rule_text`` use them to reject pronouns and filler words. A word added here
changes what the extractor reads, so each list says what it is for.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final

PERSON: Final = "Person"
PLACE: Final = "Place"
ORG: Final = "Organization"
ENTITY: Final = "entity"



def _latin_capitals() -> str:
    """The accented Latin capitals (À, Ł, Ş, Ž …), from the Latin blocks past ASCII."""
    blocks = [*range(0xC0, 0x250), *range(0x1E00, 0x1F00)]
    return "".join(chr(c) for c in blocks if unicodedata.category(chr(c)) in ("Lu", "Lt"))


# A letter that can start a name ("Osaka", "Москва", "Ἀθῆναι", "北京", "서울"): a capital of
# the cased scripts (Latin, Greek, Cyrillic, Armenian, Georgian) or any letter of the scripts
# without case (CJK ideographs, kana, Hangul, Hebrew, Arabic, Devanagari, Thai). The body of a
# regex character class; the patterns put it where ASCII ``A-Z`` started a name. Scripts not
# listed, symbols and emoji give no fact, and the extractor says so on the episode.
NAME_START: Final = (
    "A-Z" + _latin_capitals()
    + "\u0386\u0388-\u038f\u0391-\u03ab\u1f08-\u1f0f\u1f18-\u1f1d\u1f28-\u1f2f"  # Greek
    + "\u0400-\u042f\u0460\u0462\u0464\u0466\u0468\u046a"  # Cyrillic capitals
    + "\u0531-\u0556\u10a0-\u10c5\u10d0-\u10fa"  # Armenian, Georgian
    + "\u05d0-\u05ea\u0620-\u064a\u0671-\u06d3\u0904-\u0939\u0e01-\u0e30"  # Hebrew, Arabic,
    # Devanagari, Thai
    + "\u3041-\u3096\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"  # kana, CJK, Hangul
)
# A letter or digit of any script: what makes a span a name at all.
ANY_LETTER: Final = re.compile(r"[^\W_]")
_READ_SCRIPTS = re.compile(f"[{NAME_START}]")
_READ_LOWER = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "GEORGIAN")


def unread_char(char: str) -> bool:
    """Whether the rules extractor cannot read a name made of ``char``: a letter or digit of a
    script ``NAME_START`` does not list, or a symbol (emoji, ✓, ©)."""
    if ord(char) < 0x80 or char.isspace() or _READ_SCRIPTS.match(char):
        return False
    category = unicodedata.category(char)
    if category[0] == "S":
        return True
    if category[0] not in "LN":
        return False
    # A lowercase letter of a script NAME_START reads (é, ж, α) is part of a name.
    return unicodedata.name(char, "").split(" ")[0] not in _READ_LOWER


def unread_script(text: str) -> str | None:
    """The first character of ``text`` the rules extractor cannot read names in, or ``None``."""
    return next((char for char in text if unread_char(char)), None)


def mask_unread(text: str, placeholder: str = "Xy") -> str:
    """``text`` with each run of unreadable characters (and the marks that follow them) put as
    one ``placeholder`` name: whether a fact would have been read but for the script."""
    out: list[str] = []
    in_run = False
    for char in text:
        if unread_char(char) or (in_run and unicodedata.category(char)[0] == "M"):
            if not in_run:
                out.append(placeholder)
            in_run = True
            continue
        in_run = False
        out.append(char)
    return "".join(out)


# A pattern match is good evidence but not an LLM's judgement; "I left X" with nothing saying
# what X is (employer or city) is weaker still.
_CONFIDENCE = 0.9
_WEAK = 0.7
# Longer objects are almost always a clause read as a name ("I like that we went to …").
_MAX_OBJECT_WORDS = 6

# The object's entity type, for predicates whose object is always of one type.

_OBJECT_TYPES = {"lives_in": PLACE, "works_at": ORG, "married_to": PERSON}
# A capitalised-name subject of these predicates is a person.
_HUMAN_PREDICATES = frozenset(
    {"lives_in", "works_at", "has_role", "likes", "dislikes", "prefers", "has_pet", "married_to",
     "name", "age", "email", "phone", "birthday"}
)

# ----------------------------------------------------------------------------- word lists


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# "my <kin> [Name]" is a person subject; "my <pet> Name" a pet (and a has_pet fact).
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
# Time phrases: month and weekday names, spelled numbers, and a unit's length in days.
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["january", "february", "march", "april", "may", "june", "july", "august",
         "september", "october", "november", "december"]
    )
}
_MONTHS.update({"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
                "sept": 9, "oct": 10, "nov": 11, "dec": 12})
_WEEKDAYS = {d: i for i, d in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3, "few": 3,
    "a couple": 2, "a couple of": 2, "several": 3,
}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

# Never an object or a subject name: without coreference a pronoun names nothing.
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
# Capitalised words that start a sentence without being a name ("Today I …", "Maybe …").
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
    "Always Really Again Last Next In On At For From With To As By Of During Every After Until "
    "Below Above Step Example Things Bet Guess"
)
# Words after "I'm"/"call me" that describe the speaker rather than name them ("I'm Fine").
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
# A has_status subject must look like work ("the build is broken", not "the weather is down").
_TASK_WORDS = _wordset(
    "ticket task issue bug story epic pr mr project feature build deploy deployment migration "
    "release server service pipeline job sprint milestone rollout upgrade fix patch test tests "
    "ci cluster database db api backend frontend app website site branch workflow"
)
# Status words for has_status ("Ticket ABC-12 is blocked").
_STATUS = (
    r"in\s+progress|in\s+review|under\s+review|on\s+hold|done|finished|complete|completed|"
    r"broken|blocked|unblocked|open|closed|resolved|fixed|merged|deployed|shipped|cancell?ed|"
    r"stuck|failing|passing|ready|pending|paused|released|live|down|approved|rejected|wip"
)
# Names with "and" inside that list splitting must keep whole ("I love rock and roll").
_FIXED_PHRASES = (
    "rock and roll", "rock 'n' roll", "mac and cheese", "salt and pepper", "fish and chips",
    "peanut butter and jelly", "bread and butter", "pen and paper", "dungeons and dragons",
    "drum and bass", "rhythm and blues", "black and white", "law and order", "pride and prejudice",
    "lord of the rings", "bed and breakfast", "arts and crafts", "research and development",
)
# "my <attribute> is X": the predicate each attribute noun stands for.
_ATTRIBUTES = {
    "email": "email", "email address": "email", "e-mail": "email", "e-mail address": "email",
    "phone": "phone", "phone number": "phone", "mobile number": "phone", "cell": "phone",
    "birthday": "birthday", "date of birth": "birthday",
    "job": "has_role", "job title": "has_role", "title": "has_role", "role": "has_role",
    "position": "has_role", "occupation": "has_role", "profession": "has_role",
    "employer": "works_at", "company": "works_at",
    "wife": "married_to", "husband": "married_to", "spouse": "married_to",
    "age": "age", "name": "name",
}


def _alternation(words: Iterable[str]) -> str:
    """A regex alternation, longest first so that "a couple of" wins over "a"."""
    ordered = sorted(words, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)


# ----------------------------------------------------------------------------- modifiers

# Words between the subject and the trigger verb, by what they do to the fact: negations and
# "ended" words negate it, modals and intentions ("want to", "might") make it no fact at all,
# "never"/"always" pair into a correction, "be"/"have" license triggers and the present perfect.
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
# Negated "be" forms also count as "be" ("Ticket 4 isn't done").
_BE_NEG = frozenset(
    {"isn't", "isnt", "aren't", "arent", "wasn't", "wasnt", "weren't", "werent", "ain't"}
)
# "Ana is my sister" → Ana sister_of <speaker>; "Rui is my manager" → <speaker> has_manager Rui
# (predicate families). "Ana is my cousin, not my sister" corrects the relation.
_RELATIONS: dict[str, str] = {
    "sister": "sister_of", "brother": "brother_of", "sibling": "sibling_of",
    "cousin": "cousin_of", "mother": "mother_of", "mom": "mother_of", "mum": "mother_of",
    "father": "father_of", "dad": "father_of", "son": "son_of", "daughter": "daughter_of",
    "aunt": "aunt_of", "uncle": "uncle_of", "niece": "niece_of", "nephew": "nephew_of",
    "grandmother": "grandmother_of", "grandma": "grandmother_of",
    "grandfather": "grandfather_of", "grandpa": "grandfather_of",
    "manager": "has_manager", "boss": "has_manager",
}

# Transcript labels: user-side labels read as ``context.speaker``, bot-side lines are skipped, and
# words that head a note ("Update: …", "Endpoint: /v2") are not speaker names.
_ROLE_USER = frozenset({"user", "human", "me", "customer", "client"})
_ROLE_BOT = frozenset({"assistant", "ai", "bot", "system", "agent", "model", "tool"})
_NOT_SPEAKER = _wordset(
    "note todo update correction fyi ps edit reminder summary context question answer q a tip "
    "warning important re subject date time from to cc status endpoint url version actually "
    "sorry oops btw ok okay nb info title name email phone address"
)

# A full stop after these is an abbreviation, not a sentence end ("Dr. Smith", "Acme Inc.").
_ABBREV = _wordset(
    "mr mrs ms dr st mt jr sr inc ltd co corp vs etc e.g i.e u.s u.k approx prof ave rd dept "
    "fig sgt capt lt col rev"
)

# ----------------------------------------------------------------------------- statements

# First-person settings ("I set the budget to $5,000", "the launch moved to March 3"): the noun
# phrase's head decides the value's shape and the predicate. Amount nouns take money.
_AMOUNT_NOUNS = _wordset(
    "budget price cost salary pay income rent fee fees rate savings loan mortgage bill payment "
    "offer bid revenue valuation allowance spending tuition deposit funding raise bonus premium "
    "deductible balance debt wage wages"
) | {"hourly rate", "day rate", "asking price", "savings goal"}
# Quantity nouns take a number, a percentage, a quantity with its unit or an amount.
_QUANTITY_NOUNS = _wordset(
    "hours weight height score gpa goal target limit cap pace mileage streak capacity headcount "
    "commute timeline duration length attendance followers subscribers sales retention churn "
    "accuracy latency uptime coverage storage fps epochs threshold quota timeout port distance"
) | {"work hours", "word count", "page count", "team size", "batch size", "learning rate",
     "conversion rate", "target weight", "reading goal", "step goal"}
# Date nouns take a date; "the <event> date" is the event's ``scheduled_for``.
_DATE_NOUNS = frozenset({"deadline", "due date", "date", "start date", "end date", "cutoff",
                         "cut-off", "target date", "go-live date"})
_ATTR_ALIASES = {
    "cost": "price", "pay": "salary", "wage": "salary", "wages": "salary", "fees": "fee",
    "due date": "deadline", "cutoff": "deadline", "cut-off": "deadline",
    "date": "scheduled_for", "go-live date": "scheduled_for",
}
# Adjectives before the head that name no attribute ("my monthly budget" is the budget).
_ATTR_ADJECTIVES = _wordset(
    "monthly weekly yearly annual daily total overall new current final original initial revised "
    "updated estimated approximate tight max maximum minimum hard soft official entire whole "
    "planned expected projected average base starting rough strict firm increased reduced "
    "remaining available higher lower extra additional"
)
# Events a date can be set for ("the launch moved to March 3" → launch scheduled_for March 3).
_EVENT_NOUNS = _wordset(
    "launch release meeting appointment interview wedding trip flight party demo presentation "
    "exam surgery kickoff kick-off conference vacation holiday concert session call review "
    "submission delivery premiere sprint go-live cutover migration rollout deployment hearing "
    "visit class workshop webinar recital tournament race marathon show gig milestone beta "
    "checkup check-up consultation audition move closing ceremony event retreat reunion "
    "celebration dinner lunch game match performance training orientation graduation shoot "
    "recording defense defence pitch showcase festival exhibition opening screening test quiz "
    "trial course semester shift symposium summit panel meetup hackathon seminar lecture "
    "appointments"
)
