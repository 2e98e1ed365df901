// Slack's mrkdwn both ways, and long replies cut to Slack's post length: the agent writes
// CommonMark with GitHub's extensions, Slack shows mrkdwn (*bold*, _italic_, ~strike~,
// <url|label>, no headings, lists or tables), and people's messages arrive in mrkdwn with
// &, <, > escaped and mentions as <@U…>. Pure functions: no I/O, never throw, safe on any
// bytes (invalid UTF-8 passes through), callable from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

// The agent's Markdown as mrkdwn: **b**/__b__ → *b*, *i*/_i_ → _i_, ~~s~~ → ~s~, `code` and
// ``` blocks kept (no language tag; only &<> escaped inside), [l](u) and ![a](u) → <u|l>,
// lists → "• "/"1. " (nesting indented), headings → a bold line, "> " kept, rules → "───…",
// tables → a code block, \* → *; &<> escaped except Slack mentions and links the model echoed
// (<@U…>, <#C…>, <#C…|n>, <!here>, <!channel>, <!everyone>, <!subteam^S…>, <https://…|l>).
std::string markdown_to_mrkdwn(std::string_view markdown);

// Maps a Slack user id to a display name; an empty answer means unknown.
using SlackUserResolver = std::function<std::string(const std::string& user_id)>;

// What a person wrote in mrkdwn, as the model should read it: <@U1> → @U1 (@name when resolve
// names it), <#C1|gen> → #gen, <https://x|l> → "l (https://x)", <https://x> → https://x,
// <mailto:a@b|a@b> → a@b, <!here> → @here, then &lt; &gt; &amp; decoded (once, in that order).
// resolve, when set, is called on the caller's thread once per user mention.
std::string mrkdwn_to_text(std::string_view slack_text, const SlackUserResolver& resolve = {});

// Cuts text into parts of at most max_chars code points each, labels included: with more than
// one part each ends with "\n(Part i of n)". Cuts at a blank line, else a newline, else a space,
// else anywhere but inside a UTF-8 sequence; a cut inside a ``` block closes the block at the
// end of its part and reopens it at the start of the next. Text that fits is one part (empty
// text: no parts). max_chars below 64 is treated as 64.
std::vector<std::string> split_mrkdwn(std::string_view text, size_t max_chars);

}  // namespace pf
