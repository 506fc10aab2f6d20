"""The fakes behave as the tests assume."""

from langchain_core.messages import HumanMessage

from tests.conftest import scripted, structured


def test_scripted_model_answers_in_order_and_records_prompts() -> None:
    model = scripted("one", "two")
    assert model.invoke([HumanMessage("a")]).text == "one"
    reply = model.invoke([HumanMessage("b")])
    assert reply.text == "two"
    assert reply.usage_metadata is not None and reply.usage_metadata["input_tokens"] == 10
    assert [p[0].content for p in model.prompts] == ["a", "b"]


def test_structured_fake_parses_dicts_and_passes_strings_through() -> None:
    from planverify.agents.judge import JudgeVerdict

    model = structured({"remove": [], "missing": ["x"]}, "not json")
    runnable = model.with_structured_output(JudgeVerdict, include_raw=True)
    first = runnable.invoke([HumanMessage("a")])
    assert first["parsed"].missing == ["x"]
    second = runnable.invoke([HumanMessage("b")])
    assert second["parsed"] is None and second["raw"].text == "not json"
