#include "comm/failure_notice.h"

#include <mpi.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/mpi_runtime.h"

namespace llmft {
namespace {

constexpr int kNoticeTag = 1;

struct NoticeChannel {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  // Per world rank: the first notice that arrived from it, if one has.
  std::vector<std::optional<std::string>> heard_from;
  // Sends may outlive report_failure (it stops waiting after the grace period), so their
  // buffers and requests live as long as the process.
  std::deque<std::string> sent_messages;
  std::vector<MPI_Request> sends;
};

NoticeChannel& channel() {
  static NoticeChannel instance;
  return instance;
}

bool heard_from_every_other_rank(const NoticeChannel& c) {
  for (int r = 0; r < c.size; ++r) {
    if (r != c.rank && !c.heard_from[r]) return false;
  }
  return true;
}

bool every_other_rank_sent(const NoticeChannel& c, const std::string& message) {
  for (int r = 0; r < c.size; ++r) {
    if (r != c.rank && c.heard_from[r] != message) return false;
  }
  return true;
}

void send_to_every_other_rank(NoticeChannel& c, const std::string& message) {
  const std::string& text = c.sent_messages.emplace_back(message);
  for (int r = 0; r < c.size; ++r) {
    if (r == c.rank) continue;
    MPI_Request request;
    LLMFT_MPI_CHECK(MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, r, kNoticeTag,
                              c.comm, &request));
    c.sends.push_back(request);
  }
}

// Waits, at most the grace period, for this rank's sends and every other rank's notice.
void wait_for_peers(NoticeChannel& c) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kFailureReportGraceSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int sent = 0;
    LLMFT_MPI_CHECK(
        MPI_Testall(static_cast<int>(c.sends.size()), c.sends.data(), &sent, MPI_STATUSES_IGNORE));
    while (receive_failure_notice()) {
    }
    if (sent && heard_from_every_other_rank(c)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

void init_failure_notices() {
  NoticeChannel& c = channel();
  if (c.comm != MPI_COMM_NULL) return;
  LLMFT_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c.comm));
  LLMFT_MPI_CHECK(MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN));
  LLMFT_MPI_CHECK(MPI_Comm_rank(c.comm, &c.rank));
  LLMFT_MPI_CHECK(MPI_Comm_size(c.comm, &c.size));
  c.heard_from.assign(c.size, std::nullopt);
}

bool report_failure(const std::string& message) noexcept {
  NoticeChannel& c = channel();
  if (c.comm == MPI_COMM_NULL) return false;
  try {
    send_to_every_other_rank(c, message);
    wait_for_peers(c);
    return every_other_rank_sent(c, message);
  } catch (...) {
    // The caller is about to abort; an MPI error here changes nothing about that.
    return false;
  }
}

std::optional<FailureNotice> receive_failure_notice() {
  NoticeChannel& c = channel();
  if (c.comm == MPI_COMM_NULL) return std::nullopt;
  int arrived = 0;
  MPI_Status status;
  LLMFT_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, kNoticeTag, c.comm, &arrived, &status));
  if (!arrived) return std::nullopt;
  int length = 0;
  LLMFT_MPI_CHECK(MPI_Get_count(&status, MPI_CHAR, &length));
  FailureNotice notice{status.MPI_SOURCE, std::string(static_cast<size_t>(length), '\0')};
  LLMFT_MPI_CHECK(MPI_Recv(notice.message.data(), length, MPI_CHAR, status.MPI_SOURCE, kNoticeTag,
                           c.comm, MPI_STATUS_IGNORE));
  if (!c.heard_from[notice.rank]) c.heard_from[notice.rank] = notice.message;
  return notice;
}

}  // namespace llmft
