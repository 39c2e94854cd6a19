"""The rules extractor's statement patterns: the value shapes (dates, amounts, quantities,
versions) and the clause shapes ``statements.py`` reads plans, decisions, amounts and dates with.

Data, not behaviour, like ``table.py``: each regular expression says which words it reads, and
``statements.py`` says what fact each match gives.
"""

from __future__ import annotations

import re

from .words import _EVENT_NOUNS, _alternation

# ----------------------------------------------------------------------------- value shapes

_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|"
          r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?")
_WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?(?:\s*[-–]\s*\d{1,2}(?:st|nd|rd|th)?)?"  # "April 6-7"
_YEAR = r"(?:19|20)\d{2}"
_CLOCK = r"\d{1,2}(?::\d{2})?\s?(?i:am|pm|a\.m\.|p\.m\.)"
_DATE = (
    r"(?:(?:(?i:next|this|coming)\s+)?" + _WEEKDAY + r"(?:,?\s+" + _MONTH + r"\s+" + _DAY + r")?"
    r"|" + _MONTH + r"\s+" + _DAY + r"(?:,?\s+" + _YEAR + r")?"
    r"|" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s+" + _YEAR + r")?"
    r"|(?:(?i:early|mid|late|the\s+end\s+of|end\s+of|the\s+beginning\s+of)[\s-]+)?"
    + _MONTH + r"(?:\s+" + _YEAR + r")?"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}"
    r"|(?i:tomorrow|next\s+(?:week|month|year|quarter)|(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|"
    r"next\s+)?(?:day|week|month|year|quarter))"
    r"|Q[1-4](?:\s+" + _YEAR + r")?)"
    r"(?:,?\s+(?i:at)\s+" + _CLOCK + r")?"
    r"|" + _CLOCK
)
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_PER = r"(?:\s*(?:/|(?i:a|an|per|each)\s+)(?i:hour|hr|day|week|month|year|yr|night|person))?"
_MONEY = (
    r"(?:[$€£¥₹]\s?" + _NUMBER + r"(?:\s?(?i:k|m|bn|million|billion|thousand)\b)?"
    r"|(?i:usd|eur|gbp|cad|aud|inr|jpy|chf)\s?" + _NUMBER + r"(?:\s?(?i:k|m)\b)?"
    r"|" + _NUMBER + r"\s?(?i:k\s+)?(?i:dollars|euros|pounds|bucks|usd|eur|gbp|yen|rupees)\b)"
    + _PER
)
_UNIT = (
    r"(?i:hours?|hrs?|minutes?|mins?|seconds?|days?|weeks?|months?|years?|people|persons|"
    r"members|users|customers|employees|pages|words|chapters|books|lbs?|pounds|kg|kilos?|grams|"
    r"miles|km|kilometers|kilometres|meters|metres|steps|calories|kcal|reps|sets|sessions|"
    r"posts|videos|episodes|songs|tracks|items|units|gb|mb|tb|ms|mph|kph|wpm|bpm|points|"
    r"servings|cups|liters|litres)\b"
)
_QUANTITY = (
    r"(?:" + _NUMBER + r"\s?(?:%|(?i:percent)\b)|" + _NUMBER + r"\s+" + _UNIT + _PER
    + r"|" + _NUMBER + r"(?=\s*$|[\s,.;!?]))"
)
_VERSION = r"(?i:version\s+|v(?=\d))\d+(?:\.\d+)*(?:[-+][\w.]+)?"
_END = r"(?=\s*$|[\s,.;:!?)])"
_DATE_RX = re.compile(r"(?:" + _DATE + r")" + _END)
_MONEY_RX = re.compile(r"(?:" + _MONEY + r")" + _END)
_QUANTITY_RX = re.compile(r"(?:" + _MONEY + r"|" + _QUANTITY + r")" + _END)

# ----------------------------------------------------------------------------- clause shapes

_FP = r"(?i:i|we)"
_ADV = (r"(?:(?i:just|also|now|finally|already|recently|officially|actually|then|eventually|"
        r"quickly|even|really|still|both|currently)\s+)*")
_NP = (r"(?P<np>(?i:the|my|our|this|that)\s+[\w'&-]+"
       r"(?:\s+(?!(?i:to|from|until|till)\b)[\w'&-]+){0,5}?)")
_CHANGE = (r"(?i:set|changed?|raised?|lowered?|increased?|reduced?|cut|bumped|upped|moved?|"
           r"pushed(?:\s+back)?|push(?:\s+back)?|rescheduled?|postponed?|delayed?|updated?|"
           r"adjusted?|extended?|capped?|shifted?|brought\s+forward|moved\s+up|locked\s+in|"
           r"fixed|finali[sz]ed?|confirmed?|booked|scheduled?)")
_FROM_TO = r"(?:\s+(?i:from)\s+(?P<old>[^,;]+?))?\s+(?i:to|until|till|for|at)\s+"
# "I (have) set the budget to $5,000", "we had to reschedule my session from April 6 to April 8".
_SET = re.compile(
    _FP + r"(?:'ve|\s+have|\s+had)?\s+" + _ADV
    + r"(?:(?i:had|decided|agreed|managed|needed|chose)(?:\s+(?i:with)\s+[A-Z][\w'-]*)?\s+to\s+)?"
    + _CHANGE + r"\s+" + _NP
    + _FROM_TO + r"(?P<val>.+)$"
)
# "the launch (has been) moved to March 3", "my rent went up to $1,500".
_MOVED = re.compile(
    _NP + r"\s+(?:(?i:has\s+been|have\s+been|was|were|got|is|are|'s)\s+)?" + _ADV
    + r"(?P<verb>(?i:moved|pushed(?:\s+back)?|rescheduled|postponed|delayed|changed|set|raised|"
    r"lowered|increased|reduced|cut|bumped|updated|extended|brought\s+forward|moved\s+up|shifted|"
    r"slipped|went\s+up|went\s+down|dropped|rose|grew|fell|jumped|capped|locked\s+in|"
    r"confirmed|booked|scheduled|fixed|improved|climbed|declined|decreased|doubled|dipped))"
    + _FROM_TO + r"(?P<val>.+)$"
)
# The same change of something the speaker owns, anywhere in the clause ("I'm curious how my
# quiz score improved from 65% to 82%").
_MY_MOVED = re.compile(r"(?<![\w'])(?=(?i:my|our)\s)" + _MOVED.pattern)
# "I've completed 40% of my pilot script": how far along the thing is.
_PROGRESS = re.compile(
    _FP + r"(?:'ve|\s+have)?\s+" + _ADV + r"(?i:completed|finished|done|written|drafted|read|"
    r"edited|reviewed|built|coded|covered|paid\s+off)\s+(?:(?i:about|around|roughly|over|nearly|"
    r"almost)\s+)?(?P<val>\d+(?:\.\d+)?\s?(?:%|(?i:percent)\b))\s+(?i:of)\s+(?P<x>.+)$"
)
# "I scored 85% on the quiz", "I got 4 out of 5 on my geometry test".
_SCORED = re.compile(
    _FP + r"(?:'ve|\s+have)?\s+" + _ADV + r"(?i:scored|got|received|earned)\s+(?:(?i:a|an)\s+)?"
    r"(?P<val>\d+(?:\.\d+)?\s?(?:%|(?i:percent)\b)|\d+\s*(?:/|(?i:out\s+of))\s*\d+)"
    r"\s+(?i:on|in)\s+(?P<x>(?i:my|the|our|a|an|this|that)\s+.+)$"
)
# "our deadline is Friday", "the demo is scheduled for April 8", "my budget is now $200".
_IS = re.compile(
    _NP + r"\s*(?i:\s+is|'s|\s+are|\s+will\s+be|\s+has\s+been)\s+" + _ADV
    + r"(?:(?i:set|scheduled|planned|fixed|due|booked|confirmed|capped|locked\s+in)"
    r"(?:\s+(?i:for|to|on|at|by|in))?\s+|(?i:on|at|around|about|roughly|only|exactly|just|by|"
    r"in|under|over|up\s+to)\s+)?(?P<val>.+)$"
)
# "the report is due (on) June 1": a deadline of the thing.
_DUE = re.compile(
    r"(?P<np>(?:(?i:the|my|our|this|that)\s+)?[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s*"
    r"(?i:\s+is|'s|\s+are)\s+" + _ADV + r"(?i:due)\s+(?:(?i:on|by|in|at)\s+)?(?P<val>.+)$"
)
# "I've got a deadline of May 15", "we have a $200 budget", "I'm working with a budget of $5k".
_HAVE_A = re.compile(
    r"(?<![\w'])(?P<det>(?i:a|an|my|our|the))\s+(?:(?P<pre>" + _MONEY + r"|" + _QUANTITY
    + r")\s+)?(?P<mods>(?:[a-z][\w-]*\s+){0,2}?)"
    # Lowercase only: "a $5 Target gift card" names a shop.
    r"(?P<attr>budget|deadline|due\s+date|spending\s+limit|limit|cap|goal|target)\b"
    r"(?(pre)|\s+(?i:of|is|on|at|for\s+(?P<owner>[\w\s'&-]{1,30}?)\s+(?i:of|is|at)?)\s*"
    r"(?:(?i:set\s+(?:for|to|at)|around|about|roughly|only|just|under|now)\s+)?(?P<val>.+))"
)
# "I've allocated $1,500 for relocation expenses": the budget of what it is for.
_ALLOCATED = re.compile(
    _FP + r"(?:'ve|\s+have)?\s+" + _ADV + r"(?i:allocated|set\s+aside|budgeted|earmarked|"
    r"reserved)\s+(?P<val>" + _MONEY + r")\s+(?i:for|to|towards?)\s+(?P<x>.+)$"
)
_FIRST_PERSON = re.compile(_FP + r"(?:'[a-z]+)?\b")
# "I paid $153 for the Ultraboost", "I bought my laptop for $900".
_PAID = re.compile(
    _FP + r"(?:'ve|\s+have|\s+just|\s+only|\s+finally|\s+recently)*\s+(?i:paid)\s+"
    r"(?P<val>" + _MONEY + r")\s+(?i:for|on)\s+(?P<x>.+)$"
    r"|" + _FP + r"(?:'ve|\s+have|\s+just|\s+finally|\s+recently)*\s+(?i:bought|got|purchased)\s+"
    r"(?!(?i:back|up|out|home|into|to|over|off)\b)(?P<x2>(?:\S+\s+){0,5}?\S+)\s+(?i:for)\s+"
    r"(?P<val2>" + _MONEY + r")" + _END
)
# "I earn $85,000 a year", "I make $40 an hour", "my salary is …" (an amount noun, above).
_EARN = re.compile(
    _FP + r"\s+" + _ADV + r"(?i:earn|make|get\s+paid|am\s+paid|'m\s+paid)\s+"
    r"(?:(?i:around|about|roughly|only|just|over|under)\s+)?(?P<val>" + _MONEY + r")"
    # A salary is stated alone or per period: "$1 in rewards for every $10" is none.
    r"(?=\s*$|\s*[,.;!?]|\s+(?i:annually|monthly|weekly|hourly|yearly|a\s+year|before|after|now|"
    r"gross|net)\b)"
)
# "we're on version 3.2", "I upgraded to v4": the speaker's version, no product named.
_FP_VERSION = re.compile(
    _FP + r"(?:'re|'m|\s+are|\s+am|'ve|\s+have)?\s+" + _ADV
    + r"(?i:on|using|running|upgraded\s+to|updated\s+to|migrated\s+to|moved\s+to|switched\s+to)"
    r"\s+(?P<ver>" + _VERSION + r")" + _END
)
# "we switched (over) from MySQL to Postgres", "I've migrated to Vite".
_SWITCH = re.compile(
    _FP + r"(?:'ve|\s+have)?\s+" + _ADV + r"(?:(?i:had|decided)\s+to\s+)?"
    r"(?i:switched|switch|migrated|migrate|transitioned|changed\s+over|switched\s+over)\s+"
    r"(?:(?i:over\s+)?(?i:from)\s+(?P<old>.+?)\s+)?(?i:to)\s+(?P<new>.+)$"
)
# Plans and decisions: the verb phrase after "to" is the value.
_PLAN = re.compile(
    r"(?:" + _FP + r"(?:'m|'re|\s+am|\s+are)\s+" + _ADV + r"(?i:planning|preparing)\s+to"
    r"|" + _FP + r"\s+" + _ADV + r"(?i:plan|intend|aim)\s+to"
    r"|(?i:my|our)\s+(?:(?i:current|new|main|revised)\s+)?(?i:plan|goal|intention)\s+"
    r"(?i:is|now\s+is|is\s+now)\s+to)\s+(?P<vp>.+)$"
)
# "I'm trying to optimize my modal": what the speaker is working at now.
_TRYING = re.compile(
    _FP + r"(?:'m|'re|\s+am|\s+are)\s+" + _ADV + r"(?i:trying|attempting|working)\s+to\s+"
    r"(?P<vp>.+)$"
)
# Verbs after "trying to" that frame the question rather than state an endeavour.
_FRAMING = frozenset({"understand", "decide", "figure", "get", "make", "see", "think", "wrap",
                      "find", "work", "determine", "remember", "recall", "grasp", "clarify",
                      "know", "learn", "sort", "be", "do", "have", "ensure", "confirm", "check"})
_DECIDED = re.compile(
    _FP + r"(?:'ve|\s+have)?\s+" + _ADV + r"(?i:decided|resolved|agreed|chosen|chose)\s+"
    r"(?:(?i:with\s+[\w\s]+?)\s+)?to\s+(?P<vp>.+)$"
)
# "I'm working on my personal statement": what the speaker is busy with now.
_WORKING_ON = re.compile(
    _FP + r"(?:'m|'re|\s+am|\s+are)\s+" + _ADV + r"(?i:working\s+on|busy\s+with)\s+"
    r"(?P<x>(?i:my|our|a|an|the)\s+.+)$"
)
_CHOSE = re.compile(
    _FP + r"(?:'ve|\s+have|'m|'re|\s+am|\s+are)?\s+" + _ADV
    + r"(?i:chose|chosen|picked(?!\s+up\b)|selected|opted\s+for|went\s+with|gone\s+with|"
    r"going\s+with|settled\s+on|decided\s+on|decided\s+to\s+go\s+with)\s+(?!(?i:to)\s)(?P<x>.+)$"
)
# Where a verb phrase ends: the next clause, a purpose or a request.
_VP_STOP = re.compile(
    r"\s*(?:[,;?!(]|:(?!\d)|(?<!St)(?<!Dr)(?<!Mr)(?<!Ms)(?<!Mrs)\.(?=\s|$)|\s[-–—]+>?\s|\s*-+>)|\s+(?i:but|so|because|since|while|though|"
    r"although|which|and\s+(?:i|we|then|also|so|now|it|that)|so\s+that|in\s+order\s+to|"
    r"as\s+(?:mentioned|discussed|suggested|planned|agreed|needed|required|noted)|"
    r"and\s+i'm|and\s+want|and\s+need)\b"
)
_MAX_VP_WORDS = 10
# Words before a noun that make it no attribute or event name ("my very budget", "my own").
# "I'm working on a project": too vague to remember.
_VAGUE_WORK = frozenset({"project", "thing", "task", "something", "stuff", "it", "this", "that",
                         "few", "lot", "bit", "way", "couple"})
_NOT_A_MODIFIER = frozenset({"very", "really", "so", "own", "only", "entire", "whole", "this",
                             "that", "the", "a", "an", "of", "and", "or", "to", "for", "in", "on"})
_SECOND_PERSON = re.compile(r"\b(?i:you|your|yours)\b")
_NOT_A_THING = frozenset({"a", "an", "the", "my", "our", "this", "that", "some", "it", "one",
                          "something", "another", "whatever", "what", "which", "how",
                          "following", "same", "other", "both", "either", "it's"})
# A plan's verb phrase ends cleanly: no dangling preposition, and a pronoun object ("postpone
# it") names nothing without coreference.
_VP_TAIL = re.compile(r"(?:\s+(?i:for|to|with|of|in|on|at|by|and|or|the|a|an|my|our|from))+$")
_PRONOUN_OBJECT = re.compile(r"^\S+\s+(?i:it|this|that|them|these|those|one)\b")
# "book purchases this winter": a trailing time is no part of the name.
_WHEN_TAIL = re.compile(r"\s+(?i:this|next|last|every|each)\s+\w+\b.*$")
# A thousands comma is no list nor clause end ("the $85,000 offer").
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")
_EVENT_RX = re.compile(r"(?i:" + _alternation(_EVENT_NOUNS) + r")$")
_EVENT = r"(?i:" + _alternation(_EVENT_NOUNS) + r")s?"
# "my flight booked for August 20", "our meeting with Laura on Friday", "my April 7 session":
# a possessed event with its date, anywhere in a sentence (a question presupposes it too).
_EVENT_DATE = re.compile(
    r"(?:(?<![\w'])(?i:my|our)|" + _FP + r"(?:'m|'re|\s+am|\s+are)\s+" + _ADV
    + r"(?i:planning|hosting|having|throwing|organi[sz]ing|holding)\s+(?i:a|an|my|our)"
    r"|" + _FP + r"(?:'ve\s+got|\s+have\s+got|\s+have|\s+got)\s+" + _ADV + r"(?i:a|an))\s+"
    r"(?:(?i:upcoming|next|first|final|big|scheduled|planned)\s+)?"
    r"(?P<ev>(?:[a-z][\w-]*\s+){0,2}?" + _EVENT + r")"
    r"(?:\s+(?i:with|at|in)\s+[A-Z][\w'&.-]*(?:\s+[A-Z][\w'&.-]*){0,3})?"
    r"\s+(?:(?i:is|was)\s+)?(?:(?i:booked|scheduled|planned|set|confirmed)\s+)?"
    r"(?i:on|for|at)\s+(?P<val>" + _DATE + r")" + _END
)
# A date named before a change verb is the old one ("I had to reschedule my meeting on May 3").
_CHANGED = re.compile(r"(?i:reschedul|postpon|cancel|push|mov|delay|skip|miss|chang)")
