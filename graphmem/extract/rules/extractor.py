"""The rules extractor: offline, pattern-based facts from plain English text and chat messages.

No model, no I/O: a pure, deterministic function of the episode (and, for bare corrections such as
"sorry, I meant Lyon", of ``context.previous`` / ``context.facts``). Every regular expression is
compiled at import; a typical chat message takes a few hundred microseconds.

Where things are
----------------
This module is the public face and the sentence loop. The patterns are data in
``_rule_table`` (whole-clause shapes, the trigger verbs with the predicate each produces, the
correction shapes), built from the word lists of ``_rule_words``; ``_rule_clauses`` and
``_rule_engine`` apply the two tables, ``_rule_corrections`` reads corrections and looks back
over known facts, ``_rule_sentences`` and ``_rule_time`` cut an episode into clauses with their
times, ``_rule_text`` reads object spans, and ``_rule_facts`` turns drafts into public facts.
To teach the extractor a new verb, add a ``Trigger`` row; a new object shape is a new ``form``.

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

- First-person statements (``statements.py`` over ``statement_table.py``; a clause the patterns
  above read nothing from, read as written, its time phrases kept as values): amounts ("I set
  the budget to $5,000" → ``budget``; "my grocery budget went up to $400" → ``grocery_budget``),
  dates ("the launch moved to March 3" → launch ``scheduled_for``; "our deadline is Friday" →
  ``deadline``; "my flight is booked for August 20", also inside a question), prices and pay,
  progress and scores, versions without a product ("we're on version 3.2"), switches ("we
  switched from MySQL to Postgres" → ``uses`` Postgres, MySQL ended), plans and decisions
  (``plans_to``, ``decided_to``, ``chose``, ``trying_to``, ``works_on``). An assistant speaker's
  own first person gives no fact. See docs/rules.md.

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

from ..._models import EpisodeRecord, Extraction
from .._base import ExtractionContext
from .clauses import pets, whole_clause
from .corrections import _bare_correction, _contrast
from .drafts import _Draft, _entities, _finish, _pair_never_always, _State, _to_fact
from .engine import grammar
from .sentences import (
    _HEDGE,
    _HYPOTHETICAL,
    _NOT_ANYMORE,
    _QUESTION_START,
    _Clause,
    _clauses,
    _declarative_head,
    _episode_text,
    _merge_contrasts,
    _segments,
    _sentences,
)
from .statements import presupposed, statements
from .text import _NORMALIZE, _squash, _strip_lead
from .words import _ROLE_BOT, ENTITY, ORG, PERSON, PLACE, mask_unread, unread_script

__all__ = ["ENTITY", "ORG", "PERSON", "PLACE", "RulesExtractor"]


class RulesExtractor:
    """Offline English pattern extractor for plain text and chat messages (see module docs)."""

    name = "rules"
    needs_context = False

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        drafts = self._drafts(episode, context, use_previous=True)
        if (context.speaker or "").strip().lower() in _ROLE_BOT:
            # An assistant's "I"/"we" is its persona or an example it writes for the user
            # ("Hi, my name is Crystal, and I'm here because…"), not a fact to remember.
            drafts = [d for d in drafts if d.subject_kind != "fp"]
        facts = [_to_fact(d, d.predicate not in context.predicates) for d in drafts]
        warnings: list[str] = []
        unread = None if facts else unread_script(_episode_text(episode) or "")
        if unread is not None:
            # Nothing read, and the text holds what the patterns cannot read (a script they do
            # not list, an emoji). When the same text with that part as a plain name gives a
            # fact, the script is why there is none: say so, not a silent "0 facts".
            masked = episode.model_copy(update={"content": mask_unread(episode.content)})
            if self._drafts(masked, context, use_previous=False):
                warnings.append(
                    f"no fact: script not supported ({unread!r} U+{ord(unread):04X}; the rules "
                    "extractor reads names in Latin, Greek, Cyrillic, Armenian, Georgian, "
                    "Hebrew, Arabic, Devanagari, Thai, CJK, kana and Hangul, in English "
                    "sentences)"
                )
        return Extraction(entities=_entities(drafts), facts=facts, warnings=warnings)

    # ------------------------------------------------------------------ episode level
    def _drafts(
        self, episode: EpisodeRecord, context: ExtractionContext, *, use_previous: bool
    ) -> list[_Draft]:
        text = _episode_text(episode)
        if not text or not text.strip():
            return []
        speaker = (context.speaker or "").strip() or "user"
        state = _State(speaker=speaker, ref=episode.reference_time, context=context,
                       reread=self._reread, use_previous=use_previous)
        for who, segment in _segments(text.translate(_NORMALIZE), speaker):
            state.speaker = who
            state.at_start = True
            state.last_subject = None
            state.last_modal = False
            for sentence, end in _merge_contrasts(_sentences(segment)):
                self._sentence(sentence, end, state)
        return _finish(state.drafts)

    def _reread(self, episode: EpisodeRecord, context: ExtractionContext) -> list[_Draft]:
        # An earlier episode is read without its own look-back: one level is enough for "sorry,
        # I meant Lyon", and it keeps a chain of corrections from re-reading the whole history.
        return self._drafts(episode, context, use_previous=False)

    # ------------------------------------------------------------------ sentence level
    def _sentence(self, sentence: str, end: str, st: _State) -> None:
        text = sentence.strip()
        if not text:
            return
        if end == "?":
            head = _declarative_head(text) or ""
            if not head:
                # A question still presupposes the dated events it names ("…before our
                # meeting on May 3?").
                for draft in presupposed(_strip_lead(text)[0], st):
                    draft.evidence = _squash(sentence).strip(" ?")
                    st.drafts.append(draft)
                st.at_start = False
                return
            text = head
        text, correcting = _strip_lead(text)
        if not text.strip():
            return
        if _QUESTION_START.match(text) or _HYPOTHETICAL.match(text):
            st.at_start = False
            return
        contrast = _contrast(text, st)
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
            bare = _bare_correction(text, st)
            if bare is not None:
                bare.evidence = _squash(sentence).strip(" .!")
                st.drafts.append(bare)

    # ------------------------------------------------------------------ clause level
    def _clause(self, clause: _Clause, st: _State) -> list[_Draft]:
        text, correcting = _strip_lead(clause.work)
        text = text.strip()
        if not text or _HEDGE.match(text) or _HYPOTHETICAL.match(text):
            return []
        drafts: list[_Draft] | None = None
        if not clause.future:
            drafts = whole_clause(text, st)
            if drafts is None:
                drafts = grammar(text, clause, st)
            drafts = drafts + pets(text, st, drafts)
        if not drafts:
            # Plans, decisions, amounts and dates, read from the clause as written: its time
            # phrases are values here ("the launch moved to next Friday").
            drafts = statements(_strip_lead(clause.evidence)[0], st)
        for draft in drafts:
            draft.evidence = draft.evidence or clause.evidence
            if draft.valid_from is None and clause.valid_from is not None and not draft.own_time:
                draft.valid_from = clause.valid_from
            if correcting and draft.kind == "assert" and not draft.move:
                draft.kind = "correct"
        if clause.future or (clause.valid_from is not None and clause.valid_from > st.ref):
            return [d for d in drafts if d.own_time]
        return drafts
