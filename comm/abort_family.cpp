#include "comm/abort_family.h"

#include <utility>

#include "core/error.h"

namespace llmft {

AbortFamily::Member AbortFamily::join(std::string group, std::function<void()> abort) {
  members_.push_back(Record{std::move(group), std::move(abort)});
  return static_cast<Member>(members_.size() - 1);
}

void AbortFamily::leave(Member member) {
  Record& left = record(member);
  left.joined = false;
  left.abort = nullptr;
}

void AbortFamily::abort(Member member, const std::string& cause) {
  Record& failed = record(member);
  if (!failed.joined || failed.abort_index >= 0) return;
  const int index = static_cast<int>(aborts_.size());
  aborts_.push_back(Abort{member, cause, {}});
  // Marked before the actions run, so that an action that fails (or aborts again) finds
  // the family already down.
  std::vector<Member> taken_down;
  auto take_down = [&](Member m) {
    Record& r = members_[static_cast<size_t>(m)];
    if (!r.joined || r.abort_index >= 0) return;
    r.abort_index = index;
    aborts_[static_cast<size_t>(index)].groups.push_back(r.group);
    taken_down.push_back(m);
  };
  take_down(member);
  for (Member m = 0; m < static_cast<Member>(members_.size()); ++m) take_down(m);
  for (Member m : taken_down) {
    std::function<void()> action = std::move(members_[static_cast<size_t>(m)].abort);
    members_[static_cast<size_t>(m)].abort = nullptr;
    if (action) action();
  }
}

bool AbortFamily::aborted(Member member) const {
  return record(member).abort_index >= 0;
}

std::string AbortFamily::why_aborted(Member member) const {
  const Record& r = record(member);
  if (r.abort_index < 0) return "";
  const Abort& a = aborts_[static_cast<size_t>(r.abort_index)];
  std::string text = member == a.failed
                         ? "group " + r.group + " was aborted: " + a.cause
                         : "group " + r.group + " was aborted with group " +
                               record(a.failed).group + ", whose resources it shares: " + a.cause;
  if (a.groups.size() > 1) {
    text += " (groups aborted together:";
    for (const std::string& group : a.groups) text += " " + group;
    text += ")";
  }
  return text;
}

AbortFamily::Record& AbortFamily::record(Member member) {
  return const_cast<Record&>(static_cast<const AbortFamily&>(*this).record(member));
}

const AbortFamily::Record& AbortFamily::record(Member member) const {
  LLMFT_REQUIRE(member >= 0 && member < static_cast<Member>(members_.size()),
                "internal: no member " << member << " in the abort family");
  return members_[static_cast<size_t>(member)];
}

}  // namespace llmft
