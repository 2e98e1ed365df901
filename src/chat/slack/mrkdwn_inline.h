// Internal to chat/slack: one line of Markdown's inline content (emphasis, code spans, links,
// images, bare URLs, Slack tokens, escapes) as mrkdwn, for the block converter in mrkdwn.cpp.
// Pure; never throws; linear in the line's length up to small constant factors.
#pragma once

#include <string>
#include <string_view>

namespace pf::slack_internal {

// Which emphasis markers the output gets: all, all but bold (the line is bold already: a
// heading), or none (link labels, whose markup Slack does not show).
enum class Marks { kAll, kNoStrong, kNone };

// The line (no line ends) as mrkdwn; depth bounds the recursion through link labels.
std::string inline_to_mrkdwn(std::string_view line, Marks marks, int depth = 0);

// Appends text with &, <, > escaped as &amp; &lt; &gt;.
void append_escaped(std::string& out, std::string_view text);

}  // namespace pf::slack_internal
