// A C++ program that drives fabricsim through its C interface the way ASTRA-sim's system layer
// drives a network backend (astra-sim/common/AstraNetworkAPI.hh: sim_send, sim_recv,
// sim_schedule, sim_get_time): ranks post sends and receives matched by (source, destination,
// tag), a receive may be posted after its data arrived (held until it is), callbacks are
// scheduled in the simulator's clock. It runs a ring allreduce that way and checks it against
// fabricsim's own [[jobs]] ring: the same JCT to the picosecond, on 1 and 2 threads, and the
// same completions on a second run. Built and run by tests/harness.rs; exits non-zero on a
// mismatch. Usage: ring THREADS
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fabricsim.h"
#include "native.hh"

namespace {

using harness::check;
using harness::fabric;
using harness::FOREVER;

// What ASTRA-sim's network API asks of a backend, over one fabricsim session.
class Network {
 public:
  using Callback = std::function<void()>;
  explicit Network(FsSession* s) : s_(s) {}

  uint64_t now() const { return fs_now(s_); }

  // sim_send: the message is tagged by its (src, dst, tag), as ASTRA-sim matches it.
  void send(uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag) {
    uint32_t id = 0;
    check(fs_send(s_, src, dst, bytes, FS_NOW, key(src, dst, tag), &id), "fs_send");
  }

  // sim_recv: `done` runs when the message from `src` to `dst` with `tag` has arrived, at
  // once if it already has.
  void recv(uint32_t src, uint32_t dst, uint64_t tag, Callback done) {
    uint64_t k = key(src, dst, tag);
    if (arrived_.erase(k)) {
      done();
    } else {
      posted_[k] = std::move(done);
    }
  }

  // Receives whose data arrived before they were posted.
  size_t early = 0;

  // sim_schedule: `f` runs `delay` ps from now.
  void schedule(uint64_t delay, Callback f) { timers_.emplace(std::make_pair(now() + delay, seq_++), std::move(f)); }

  // Runs until nothing is left: completions deliver receives, timers fire in time order.
  // Returns every completion (id, end) in order.
  std::vector<std::pair<uint32_t, uint64_t>> run() {
    std::vector<std::pair<uint32_t, uint64_t>> log;
    for (;;) {
      // timers due now first (a callback scheduled for the current instant)
      while (!timers_.empty() && timers_.begin()->first.first <= now()) fire();
      uint64_t limit = timers_.empty() ? FOREVER : timers_.begin()->first.first;
      FsStatus st = fs_run_until_completion(s_, limit);
      check(st, "fs_run_until_completion");
      FsCompletion batch[64];
      size_t got = 0, total = 0;
      while ((got = fs_completions(s_, batch, 64)) > 0) {
        total += got;
        for (size_t i = 0; i < got; i++) {
          log.emplace_back(batch[i].id, batch[i].end_ps);
          auto it = posted_.find(batch[i].tag);
          if (it == posted_.end()) {
            arrived_.insert(batch[i].tag);  // early: held until its receive is posted
            early++;
          } else {
            Callback done = std::move(it->second);
            posted_.erase(it);
            done();
          }
        }
      }
      if (st == FS_ENDED || (total == 0 && timers_.empty())) break;
    }
    return log;
  }

 private:
  static uint64_t key(uint32_t src, uint32_t dst, uint64_t tag) { return (uint64_t(src) << 40) | (uint64_t(dst) << 16) | tag; }
  void fire() {
    auto it = timers_.begin();
    Callback f = std::move(it->second);
    timers_.erase(it);
    f();
  }
  FsSession* s_;
  std::map<uint64_t, Callback> posted_;
  std::set<uint64_t> arrived_;
  std::map<std::pair<uint64_t, uint64_t>, Callback> timers_;
  uint64_t seq_ = 0;
};

// A ring allreduce as a system layer would run it: each rank starts by a scheduled callback,
// then for each of the 2(n-1) steps sends its chunk to the next rank and posts the receive of
// the step from the previous one; the next step starts when that receive completes.
struct Ring {
  Network& net;
  std::vector<uint32_t> hosts;
  uint64_t chunk;
  uint64_t last_end = 0;

  void step(size_t rank, uint64_t s) {
    size_t n = hosts.size();
    size_t next = (rank + 1) % n, prev = (rank + n - 1) % n;
    net.send(hosts[rank], hosts[next], chunk, s);
    net.recv(hosts[prev], hosts[rank], s, [this, rank, s, n] {
      last_end = net.now();
      if (s + 1 < 2 * (n - 1)) step(rank, s + 1);
    });
  }
  void start() {
    for (size_t r = 0; r < hosts.size(); r++) net.schedule(0, [this, r] { step(r, 0); });
  }
};

std::vector<std::pair<uint32_t, uint64_t>> driven(const std::vector<uint32_t>& hosts, uint64_t size, uint32_t threads, uint64_t* end,
                                                  size_t* early) {
  FsSession* s = nullptr;
  check(fs_session_new(fabric("[transport]\nconnections = \"per_pair\"\n").c_str(), threads, &s), "fs_session_new");
  Network net(s);
  Ring ring{net, hosts, size / hosts.size()};
  ring.start();
  auto log = net.run();
  *end = ring.last_end;
  *early = net.early;
  fs_session_free(s);
  return log;
}

// Every rank of 4 sends (1 + b) x 16 KiB to each other rank b at 0 and posts its receives at 3 us, a
// scheduled callback: those that arrived before are held and delivered when posted, the rest
// when they arrive. Returns the number of receives whose callback ran at the wrong time.
int late_receives(uint32_t threads) {
  FsSession* s = nullptr;
  check(fs_session_new(fabric("").c_str(), threads, &s), "fs_session_new");
  Network net(s);
  const uint64_t post = 3'000'000;
  std::map<uint64_t, uint64_t> fired;  // tag -> when its receive's callback ran
  for (uint32_t a = 0; a < 4; a++)
    for (uint32_t b = 0; b < 4; b++)
      if (a != b) net.send(a, b, (1 + b) * (16 << 10), 7);
  net.schedule(post, [&net, &fired] {
    for (uint32_t a = 0; a < 4; a++)
      for (uint32_t b = 0; b < 4; b++)
        if (a != b) net.recv(a, b, 7, [&net, &fired, a, b] { fired[(uint64_t(a) << 8) | b] = net.now(); });
  });
  auto log = net.run();
  int wrong = 0;
  for (auto [id, end] : log) {
    uint32_t a = id / 3, k = id % 3, b = k < a ? k : k + 1;  // the sends' order above
    uint64_t want = end > post ? end : post;
    if (fired[(uint64_t(a) << 8) | b] != want) wrong++;
  }
  std::printf("late receives, %u thread(s): %zu of %zu arrived before their receive was posted, %d fired at the wrong time\n",
              threads, net.early, log.size(), wrong);
  fs_session_free(s);
  return wrong + (log.size() != 12) + (net.early == 0 || net.early == 12);
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t threads = argc > 1 ? uint32_t(std::atoi(argv[1])) : 1;
  const uint64_t size = 4ULL << 20;
  int failed = 0;
  for (auto [list, hosts] : {std::make_pair(std::string("\"0-7\""), std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}),
                             std::make_pair(std::string("[0, 16, 32, 48, 64, 80, 96, 112]"),
                                            std::vector<uint32_t>{0, 16, 32, 48, 64, 80, 96, 112})}) {
    uint64_t want = harness::native_jct(list, size);
    uint64_t end1 = 0, end2 = 0;
    size_t early = 0, early2 = 0;
    auto a = driven(hosts, size, threads, &end1, &early);
    auto b = driven(hosts, size, threads, &end2, &early2);
    bool same = a == b && end1 == end2 && early == early2;
    std::printf("hosts %s, %u thread(s): native %llu ps, driven %llu ps, %zu completions (%zu before their receive), second run %s\n",
                list.c_str(), threads, (unsigned long long)want, (unsigned long long)end1, a.size(), early,
                same ? "identical" : "DIFFERENT");
    if (end1 != want || !same || a.size() != 2 * 7 * 8) failed = 1;
  }
  if (late_receives(threads) != 0) failed = 1;
  // a refusal carries the command line's text
  FsSession* s = nullptr;
  if (fs_session_new(fabric("[transport]\nmtu = \"0B\"\n").c_str(), 1, &s) != FS_ERROR ||
      std::strstr(fs_last_error(), "transport.mtu") == nullptr) {
    std::printf("a bad scenario was not refused by field: %s\n", fs_last_error());
    failed = 1;
  }
  return failed;
}
