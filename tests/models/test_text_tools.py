"""The text tool protocol: its parser against hostile replies, its rendering, and the
wrapper that serves tool calls to a model that gives none natively."""
from __future__ import annotations

import json

import pytest

from harness.models import (
    Capabilities,
    ChatModel,
    Completion,
    Message,
    ModelConfigError,
    ModelSettings,
    ScriptedModel,
    ToolCall,
    ToolSpec,
    argument_problem,
    open_model,
)
from harness.models.text_tools import (
    PROMPTS_DIR,
    TextToolModel,
    parse_tool_calls,
    render_call,
    to_text_messages,
    with_tool_protocol,
)

PYTHON = ToolSpec("python", "Run a Python script; returns stdout, stderr and the exit status.", {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "the script"}, "stdin": {"type": "string"}},
    "required": ["code"],
})
SUBMIT = ToolSpec("submit", "Submit the final program; ends the episode.", {
    "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"],
})
TOOLS = (PYTHON, SUBMIT)


def block(obj, tag: str = "tool_call") -> str:
    return f"```{tag}\n{obj if isinstance(obj, str) else json.dumps(obj)}\n```"


def parse(text: str):
    return parse_tool_calls(text, TOOLS)


# --------------------------------------------------------------------------- parser


def test_one_call_is_read_with_its_arguments_as_json():
    parsed = parse("I will test it.\n\n" + block({"name": "python", "arguments": {"code": "print(1)"}}))
    assert parsed.error is None
    (call,) = parsed.calls
    assert (call.id, call.name, json.loads(call.arguments)) == ("text_1_1", "python", {"code": "print(1)"})


def test_several_calls_in_order():
    text = "\n".join([
        block({"name": "python", "arguments": {"code": "a"}}),
        "then",
        block([{"name": "python", "arguments": {"code": "b"}}, {"name": "submit", "arguments": {"code": "c"}}]),
    ])
    parsed = parse_tool_calls(text, TOOLS, turn=4)
    assert [(c.id, c.name, json.loads(c.arguments)["code"]) for c in parsed.calls] == [
        ("text_4_1", "python", "a"), ("text_4_2", "python", "b"), ("text_4_3", "submit", "c")]


def test_code_with_literal_newlines_and_quotes_inside_the_json_string():
    text = '```tool_call\n{"name": "submit", "arguments": {"code": "def f(s):\n\treturn s.split(\\"\\n\\")\n"}}\n```'
    (call,) = parse(text).calls
    assert json.loads(call.arguments)["code"] == 'def f(s):\n\treturn s.split("\n")\n'


def test_a_call_broken_by_the_code_s_own_quotes_is_repaired():
    """As the embedded 0.5B model writes them: a docstring's triple quotes unescaped
    inside the one string argument, the newlines escaped."""
    text = ('```tool_call\n{"name": "python", "arguments": {"code": "def f(s: str) -> str:\\n    """Say '
            'it: \\"hi\\".\n    """\\n    return s + \'"\'\\u00e9\\n\\nprint(f(\\"a\\"))"}}\n```')
    (call,) = parse(text).calls
    assert call.name == "python" and call.id == "text_1_1"
    assert json.loads(call.arguments) == {"code": 'def f(s: str) -> str:\n    """Say it: "hi".\n    """\n'
                                                  '    return s + \'"\'é\n\nprint(f("a"))'}
    assert argument_problem(call, TOOLS) is None


@pytest.mark.parametrize("text", [
    # a tool not offered, an argument the tool has not, a second argument, a number
    '```tool_call\n{"name": "shell", "arguments": {"code": "echo """x""""}}\n```',
    '```tool_call\n{"name": "python", "arguments": {"script": "print("x")"}}\n```',
    '```tool_call\n{"name": "python", "arguments": {"code": "print("x")", "stdin": "1", "code": "2"}}\n```',
    '```tool_call\n{"name": "python", "arguments": {"code": "print("x")", "stdin": "a"b"}}\n```',
    '```tool_call\n{"name": "python", "arguments": {"code": "print("x")"}\n```',  # one brace short
    '```tool_call\n{"name": "python", "arguments": {"code": "\n```',
    '```tool_call\n{"name": "python", "arguments": {"code": "}}\n```',
])
def test_the_repair_guesses_at_nothing_else(text):
    parsed = parse(text)
    assert parsed.calls == () and "not valid JSON" in parsed.error


def test_a_repaired_call_may_end_with_another_argument_written_properly():
    text = '```tool_call\n{"name": "python", "arguments": {"code": "print("x")\\n", "stdin": "1\\n2"}}\n```'
    (call,) = parse(text).calls
    assert json.loads(call.arguments) == {"code": 'print("x")\n', "stdin": "1\n2"}


def test_the_repair_keeps_lone_surrogates_and_backslashes_as_written():
    text = '```tool_call\n{"name": "submit", "arguments": {"code": "a\\ud800 "b" \\q \\"}}\n```'
    (call,) = parse(text).calls
    assert json.loads(call.arguments)["code"] == 'a\\ud800 "b" \\q \\'


@pytest.mark.parametrize("text,error", [
    ("```tool_call\n{\"name\": \"python\", \"arguments\": {\"code\": \"print(1)\"\n```", "not valid JSON"),
    ("```tool_call\n{\"name\": \"python\", \"arguments\": {\"code\": \"print(1)\"}}", "not closed"),
    ("```tool_call\n{\"arguments\": {\"code\": \"x\"}}\n```", 'no "name"'),
    ("```tool_call\n[1, 2]\n```", "does not hold a JSON object"),
    ("```tool_call\n" + "[" * 100_000 + "\n```", "not valid JSON"),
])
def test_a_broken_call_is_no_usable_call_with_the_reason(text, error):
    parsed = parse(text)
    assert parsed.calls == () and error in parsed.error


@pytest.mark.parametrize("text", [
    "Here is the code:\n```python\nprint(1)\n```",  # a plain code block is no call
    '{"name": "python", "arguments": {"code": "print(1)"}}',  # a bare JSON line is no call
    "````markdown\n" + block({"name": "python", "arguments": {"code": "x"}}) + "\n````",  # quoted in a fence
    "```python\nexample = '''\n```tool_call\n{\"name\": \"submit\", \"arguments\": {}}\n```\n'''\n```",
    block({"name": "run_shell", "arguments": {"cmd": "ls"}}, tag="json"),  # json naming no offered tool: data
    block({"config": {"name": "python"}}, tag="json"),
    "~~~\n" + block({"name": "python", "arguments": {"code": "x"}}) + "\n~~~",
    "",
])
def test_calls_inside_other_blocks_or_outside_the_form_are_not_calls(text):
    parsed = parse(text)
    assert parsed.calls == () and parsed.error is None


def test_a_json_block_naming_an_offered_tool_is_a_call_and_unknown_tools_pass_through():
    parsed = parse(block({"name": "submit", "arguments": {"code": "x"}}, tag="json")
                   + "\n" + block({"name": "rm_rf", "arguments": {}}))
    assert [c.name for c in parsed.calls] == ["submit", "rm_rf"]
    # the tool layer, not the parser, answers a call to a tool that does not exist
    assert "unknown tool 'rm_rf'" in argument_problem(parsed.calls[1], TOOLS)


def test_argument_spellings_the_parser_accepts():
    as_string = block({"name": "python", "arguments": json.dumps({"code": "s"})})
    as_parameters = block({"name": "python", "parameters": {"code": "p"}})
    flat = block({"name": "python", "code": "f"})
    malformed_string = block({"name": "python", "arguments": "{not json"})
    codes = [parse(t).calls[0] for t in (as_string, as_parameters, flat, malformed_string)]
    assert [json.loads(c.arguments)["code"] for c in codes[:3]] == ["s", "p", "f"]
    assert codes[3].arguments == "{not json"  # raw: the tool layer says it is not JSON
    assert "not a JSON object" in argument_problem(codes[3], TOOLS)


def test_a_flood_of_calls_is_cut():
    text = "\n".join(block({"name": "python", "arguments": {"code": str(i)}}) for i in range(100))
    assert len(parse(text).calls) == 16


@pytest.mark.parametrize("code", ["print(1)", "s = '```'\nprint(s * 3)\n", "x = '````python'\n", 'print("\\u00e9 é")'])
def test_a_rendered_call_parses_back_to_itself(code):
    call = ToolCall("c1", "python", json.dumps({"code": code}))
    (back,) = parse(render_call(call)).calls
    assert (back.name, json.loads(back.arguments)) == ("python", {"code": code})


def test_argument_problems_name_what_is_wrong():
    def problem(args: str, name: str = "python"):
        return argument_problem(ToolCall("c", name, args), TOOLS)

    assert problem(json.dumps({"code": "x"})) is None
    assert problem(json.dumps({"code": "x", "stdin": "1"})) is None
    assert "needs the argument(s) code" in problem("{}")
    assert "must be of type string" in problem(json.dumps({"code": 5}))
    assert "not a JSON object" in problem("[1]")


# --------------------------------------------------------------------------- the wrapper


def test_the_wrapper_sends_instructions_and_no_tools_and_parses_the_reply():
    inner = ScriptedModel(["Testing.\n" + block({"name": "python", "arguments": {"code": "print(2)"}})])
    model = TextToolModel(inner)
    done = model.complete([Message("user", "add")], system="You solve tasks.", tools=TOOLS)
    call = inner.calls[0]
    assert call.tools == ()  # the backend is offered no tools
    assert call.system.startswith("You solve tasks.\n\nYou can use tools.")
    assert "```tool_call" in call.system and "- python: Run a Python script" in call.system
    assert 'argument "code" (string, required): the script' in call.system
    assert 'argument "stdin" (string, optional)' in call.system
    assert [c.name for c in done.tool_calls] == ["python"] and done.text.startswith("Testing.")
    assert done.tool_calls[0].id == "text_1_1" and done.tool_parse_error is None


def test_the_instructions_live_in_templates():
    text = (PROMPTS_DIR / "instructions.j2").read_text()
    assert "tool_call" in text and "fenced block" in text
    assert (PROMPTS_DIR / "result.j2").is_file() and (PROMPTS_DIR / "call.j2").is_file()


def test_the_history_goes_back_as_text():
    first = ToolCall("text_1_1", "python", json.dumps({"code": "print(2)"}))
    written = "Testing.\n" + render_call(first)
    native = ToolCall("call_9", "submit", json.dumps({"code": "x = 1"}))
    history = [
        Message("user", "task"),
        Message("assistant", written, tool_calls=(first,)),  # its text already holds the call
        Message("tool", "2\n", tool_call_id="text_1_1", name="python"),
        Message("user", "and now?"),
        Message("assistant", "", tool_calls=(native,)),  # a call made natively elsewhere
        Message("tool", "error: refused", tool_call_id="call_9", name="submit"),
    ]
    sent = to_text_messages(history)
    assert [m.role for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[1].content == written
    assert sent[2].content == "Result of python (call text_1_1):\n2\n\nand now?"
    assert parse(sent[3].content).calls[0].name == "submit"
    assert "Result of submit (call call_9):\nerror: refused" == sent[4].content
    assert all(not m.tool_calls and m.tool_call_id is None for m in sent)


def test_required_and_named_choices_are_said_and_none_offers_nothing():
    inner = ScriptedModel(responder=lambda s, m: "no call here")
    model = TextToolModel(inner)
    for choice, said in (("required", "Every reply must call a tool."), ("submit", "Call the tool submit now.")):
        reply = model.complete([Message("user", "x")], tools=TOOLS, tool_choice=choice)
        assert said in inner.calls[-1].system
        assert reply.tool_calls == () and reply.tool_parse_error is None  # no call, nothing malformed
    model.complete([Message("user", "x")], system="plain", tools=TOOLS, tool_choice="none")
    assert inner.calls[-1].system == "plain"


def test_without_tools_the_wrapper_changes_nothing():
    inner = ScriptedModel(["plain answer"])
    reply = TextToolModel(inner).complete([Message("user", "x")], system="s", max_tokens=9)
    assert reply.text == "plain answer" and inner.calls[0].system == "s" and inner.calls[0].max_tokens == 9


def test_a_broken_reply_is_an_explicit_no_call_never_an_exception():
    inner = ScriptedModel(['```tool_call\n{"name": "python", "arguments": {"code": "print(1)"\n```'])
    reply = TextToolModel(inner).complete([Message("user", "x")], tools=TOOLS)
    assert reply.tool_calls == () and "not valid JSON" in reply.tool_parse_error


class _NoTools(ChatModel):
    spec = "plain:x"
    capabilities = Capabilities(tools=False)

    def complete(self, messages, **kwargs) -> Completion:
        return Completion(block({"name": "submit", "arguments": {"code": "x"}}), "plain")


def test_the_setting_picks_the_protocol_and_run_json_says_which():
    scripted = ScriptedModel(["x"])
    assert with_tool_protocol(scripted, "native") is scripted
    assert with_tool_protocol(scripted, "auto") is scripted  # it has native tool calls
    text = with_tool_protocol(scripted, "text")
    assert isinstance(text, TextToolModel) and text.describe()["tool_protocol"] == "text"
    assert text.describe()["tool_protocol_templates"].startswith("sha256:")
    assert scripted.describe()["tool_protocol"] == "native"
    plain = with_tool_protocol(_NoTools(), "auto")  # no native calls: the text protocol serves them
    assert isinstance(plain, TextToolModel)
    assert plain.complete([Message("user", "x")], tools=TOOLS).tool_calls[0].name == "submit"
    with pytest.raises(ModelConfigError, match="no native tool calls"):
        with_tool_protocol(_NoTools(), "native")
    with pytest.raises(ModelConfigError, match="tool_protocol must be one of"):
        with_tool_protocol(scripted, "smoke-signals")


def test_open_model_applies_the_setting_outside_the_cache(tmp_path):
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"reply": block({"name": "python", "arguments": {"code": "1"}})}) + "\n")
    settings = ModelSettings(cache_dir=tmp_path / "cache", tool_protocol="text")
    first = open_model(f"scripted:{script}", settings).complete([Message("user", "x")], tools=TOOLS)
    again = open_model(f"scripted:{script}", settings)
    second = again.complete([Message("user", "x")], tools=TOOLS)
    assert second.cached and second.tool_calls == first.tool_calls  # the raw text was cached, parsed again
    assert again.inner.inner.calls == []


def test_as_sent_is_what_the_backend_was_given():
    inner = ScriptedModel(["```tool_call\n{\"name\": \"submit\", \"arguments\": {\"code\": \"x\"}}\n```"])
    model = TextToolModel(inner)
    call = ToolCall("c1", "python", json.dumps({"code": "print(2)"}))
    history = [Message("user", "task"), Message("assistant", "", tool_calls=(call,)),
               Message("tool", "2\n", tool_call_id="c1", name="python")]
    system, messages, tools = model.as_sent(history, system="sys", tools=TOOLS, tool_choice="required")
    model.complete(history, system="sys", tools=TOOLS, tool_choice="required")
    seen = inner.calls[0]
    assert (system, messages, tools) == (seen.system, seen.messages, ()) and seen.tools == ()
    native = ScriptedModel(["x"])
    assert native.as_sent(history, system="sys", tools=TOOLS) == ("sys", tuple(history), TOOLS)


def test_the_model_check_reaches_the_backend_past_the_protocol_and_the_cache(tmp_path):
    from harness.run.model_check import check_model

    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"match": "", "reply": "ok"}) + "\n")  # answers every call
    settings = ModelSettings(cache_dir=tmp_path / "cache", tool_protocol="text")
    model = open_model(f"scripted:{script}", settings)
    backend = model.inner.inner
    for _ in range(2):  # the second check is not answered by the cache either
        check_model(model, temperature=0.0)
    assert len(backend.calls) == 2
