// The Python program that renders chat templates for ChatTemplate::render: Jinja2, the
// reference implementation, in the environment of transformers' apply_chat_template
// (its utils/chat_template_utils.py, reimplemented): an ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks and the loopcontrols extension; the {% generation %} tag
// (rendering its body, as transformers does when no assistant mask is asked for); a tojson
// filter that does not escape non-ASCII (ensure_ascii, indent, separators and sort_keys as
// json.dumps takes them); the globals raise_exception and strftime_now; and the variables
// messages, add_generation_prompt, tools and documents (None) and the special tokens.
//
// Protocol, UTF-8 JSON both ways. Stdin: {"template": TEXT, "special_tokens": {NAME: TEXT},
// "add_generation_prompt": BOOL, "conversations": [[{"role": R, "content": C}, ...], ...]}.
// Stdout: {"rendered": [TEXT, ...]}, or {"error": "no_jinja" | "template", "message": M,
// "line": N or null, "conversation": I or null} (I indexes "conversations").
#pragma once

namespace llmft::io {

inline constexpr const char kChatTemplatePython[] = R"PY(
import json, sys, traceback

def reply(value):
    sys.stdout.buffer.write(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    sys.exit(0)

def fail(kind, message, line=None, conversation=None):
    reply({"error": kind, "message": message, "line": line, "conversation": conversation})

try:
    import jinja2, jinja2.ext, jinja2.nodes, jinja2.sandbox
except ImportError as error:
    fail("no_jinja", str(error))
from datetime import datetime

class Generation(jinja2.ext.Extension):
    tags = {"generation"}
    def parse(self, parser):
        line = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(line)
    def _render_body(self, caller):
        return caller()

def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)

def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)

def strftime_now(format):
    return datetime.now().strftime(format)

def template_line(error):
    line = getattr(error, "lineno", None)
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == "<template>":
            line = frame.lineno
    return line

request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
environment = jinja2.sandbox.ImmutableSandboxedEnvironment(
    trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols])
environment.filters["tojson"] = tojson
environment.globals["raise_exception"] = raise_exception
environment.globals["strftime_now"] = strftime_now
try:
    template = environment.from_string(request["template"])
except jinja2.exceptions.TemplateSyntaxError as error:
    fail("template", error.message or str(error), error.lineno)
rendered = []
for index, messages in enumerate(request["conversations"]):
    try:
        rendered.append(template.render(
            messages=messages, tools=None, documents=None,
            add_generation_prompt=request["add_generation_prompt"], **request["special_tokens"]))
    except Exception as error:
        message = str(error) or type(error).__name__
        if not isinstance(error, jinja2.exceptions.TemplateError):
            message = type(error).__name__ + ": " + message
        fail("template", message, template_line(error), index)
reply({"rendered": rendered})
)PY";

}  // namespace llmft::io
