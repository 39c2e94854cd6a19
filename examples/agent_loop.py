"""An agent loop with long-term memory: recall before answering, remember after.

Runs fully offline: the store is a temporary SQLite file, facts come from the rules extractor and
the chat model is LangChain's ``GenericFakeChatModel`` replaying scripted replies. Swap in a real
model (``ChatOpenAI(...)``, ``ChatOllama(...)``) and nothing else changes: the memory context it
is given is real.

    pip install -e '.[langchain]'
    python examples/agent_loop.py            # or: python examples/agent_loop.py --store memory.db

Watch the "memory" block before each answer: Maya's coffee preference is corrected to tea, and
her Lisbon address is superseded by Porto, with the old values kept and marked as replaced.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from graphmem import GraphMemory, RetrievalConfig
from graphmem.integrations.langchain import GraphMemRetriever, make_memory_tools

SYSTEM = (
    "You are a helpful assistant with long-term memory. Answer from the memory below; "
    "values marked 'replaced' are out of date.\n\n{memory}"
)


@dataclass(frozen=True)
class Turn:
    at: datetime
    text: str
    reply: str  # what the scripted model says (a real model would write this itself)


def _at(month: int, day: int) -> datetime:
    return datetime(2024, month, day, 9, 0, tzinfo=UTC)


SPEAKER = "Maya"
TURNS = (
    Turn(_at(1, 8), "Hi! I live in Lisbon and I prefer coffee.",
         "Nice to meet you, Maya! Lisbon and coffee, noted."),
    Turn(_at(1, 9), "What should you bring me in the morning?",
         "A coffee, of course."),
    Turn(_at(2, 10), "Actually, I prefer tea, not coffee.",
         "Sorry about that: tea from now on."),
    Turn(_at(3, 14), "I moved to Porto last month.",
         "Congratulations on the move to Porto!"),
    Turn(_at(3, 15), "Where do I live now, and what should you bring me?",
         "You live in Porto now (no longer Lisbon), and I'll bring you tea."),
)


def run(memory: GraphMemory, model: BaseChatModel, turns: Sequence[Turn] = TURNS) -> None:
    """The loop: recall → answer → remember, printing what memory held at each step."""
    retriever = GraphMemRetriever(memory=memory, group_id="maya", k=4, hops=1)
    tools = {tool.name: tool for tool in make_memory_tools(memory, group_id="maya")}
    for number, turn in enumerate(turns, 1):
        print(f"\n=== turn {number} · {turn.at.date().isoformat()} ===")
        print(f"{SPEAKER}: {turn.text}")
        # 1. recall before answering (no LLM call: vector + full-text + graph expansion)
        memory_block = retriever.recall(f"{SPEAKER}: {turn.text}", as_of=turn.at).to_context()
        print("memory:")
        for line in memory_block.splitlines()[1:]:
            print(f"  {line}")
        # 2. answer with the memory in the prompt
        answer = model.invoke(
            [SystemMessage(SYSTEM.format(memory=memory_block)), HumanMessage(turn.text)]
        )
        print(f"assistant: {answer.content}")
        # 3. remember what the user said (the agent could also call this tool itself)
        update = tools["remember"].invoke(
            {"text": turn.text, "speaker": SPEAKER, "reference_time": turn.at.isoformat()}
        )
        print("remembered: " + update.replace("\n", "\n  "))
    print("\n=== where Maya has lived ===")
    print(tools["history"].invoke({"entity": SPEAKER, "predicate": "lives_in"}))
    print("\n=== what memory holds about Maya now ===")
    print(retriever.recall(SPEAKER).to_context())


def scripted_model(turns: Sequence[Turn] = TURNS) -> BaseChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(turn.reply) for turn in turns]))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="SQLite file to use (default: a temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(args.store) if args.store else Path(scratch) / "agent.db"
        # An assistant wants the speaker's latest facts in every prompt, even when the turn's
        # words do not point at them ("what should you bring me?"): named_fact_limit=2 adds
        # the two latest facts about an entity the query names (off by default: it costs
        # evidence retrieval, see bench/README.md).
        with GraphMemory(path, retrieval=RetrievalConfig(named_fact_limit=2)) as memory:
            run(memory, scripted_model())


if __name__ == "__main__":
    main()
