// fabricsim as an ASTRA-sim network backend (FabricsimNetworkApi.hh).
#include "FabricsimNetworkApi.hh"

#include <cmath>
#include <stdexcept>

namespace Fabricsim {

namespace {

// Runs past any time a workload reaches (fabricsim's own `stop.max_time` still applies).
const uint64_t FOREVER = UINT64_MAX / 2;

void check(FsStatus s, const char* what) {
    if (s == FS_ERROR) throw std::runtime_error(std::string(what) + ": " + fs_last_error());
}

// ASTRA-sim's time (a value in a resolution) as ps.
uint64_t to_ps(const AstraSim::timespec_t& t) {
    long double scale = 1;
    switch (t.time_res) {
        case AstraSim::SE: scale = 1e12L; break;
        case AstraSim::MS: scale = 1e9L; break;
        case AstraSim::US: scale = 1e6L; break;
        case AstraSim::NS: scale = 1e3L; break;
        case AstraSim::FS: scale = 1e-3L; break;
    }
    long double ps = t.time_val * scale;
    // a negative delta is now; one past fabricsim's horizon is the horizon (no wrap)
    if (!(ps > 0)) return 0;
    if (ps >= static_cast<long double>(FOREVER)) return FOREVER;
    return static_cast<uint64_t>(std::llround(ps));
}

}  // namespace

Backend::Backend(const std::string& scenario, uint32_t threads, std::vector<uint32_t> hosts)
    : hosts_(std::move(hosts)) {
    check(fs_session_new(scenario.c_str(), threads, &session_), "fabricsim scenario");
}

Backend::~Backend() { fs_session_free(session_); }

uint64_t Backend::now_ps() const { return fs_now(session_); }

void Backend::send(int src, int dst, int tag, uint64_t count, Handler handler, void* arg) {
    Key key{tag, src, dst, count};
    uint64_t chunk = sends_[key]++;
    Entry& e = entries_[{key, chunk}];
    e.send_handler = handler;
    e.send_arg = arg;
    e.sent = true;
    auto host = [this](int r) { return r < int(hosts_.size()) ? hosts_[r] : uint32_t(r); };
    uint64_t message = messages_.size();
    messages_.emplace_back(key, chunk);
    in_flight_++;
    check(fs_send(session_, host(src), host(dst), count > 0 ? count : 1, FS_NOW, message, nullptr), "sim_send");
}

void Backend::recv(int src, int dst, int tag, uint64_t count, Handler handler, void* arg) {
    Key key{tag, src, dst, count};
    uint64_t chunk = recvs_[key]++;
    auto it = entries_.find({key, chunk});
    if (it != entries_.end() && it->second.arrived) {
        // its data is there: the handler runs now (after what is running), as ASTRA-sim's own
        // backends schedule it
        entries_.erase(it);
        schedule_at(now_ps(), handler, arg);
        return;
    }
    Entry& e = entries_[{key, chunk}];
    e.recv_handler = handler;
    e.recv_arg = arg;
}

void Backend::schedule_at(uint64_t at_ps, Handler handler, void* arg) {
    timers_.emplace(std::make_pair(at_ps, seq_++), std::make_pair(handler, arg));
}

void Backend::finished(int) { finished_++; }

void Backend::arrived(uint64_t message) {
    in_flight_--;
    auto where = messages_.at(message);
    auto it = entries_.find(where);
    if (it == entries_.end()) throw std::logic_error("fabricsim backend: a message arrived that was never sent");
    Entry e = it->second;
    if (e.recv_handler != nullptr) {
        entries_.erase(it);
    } else {
        it->second.arrived = true;
    }
    if (e.send_handler != nullptr) e.send_handler(e.send_arg);
    if (e.recv_handler != nullptr) e.recv_handler(e.recv_arg);
}

void Backend::fire() {
    auto it = timers_.begin();
    auto [handler, arg] = it->second;
    timers_.erase(it);
    handler(arg);
}

bool Backend::run() {
    FsCompletion batch[256];
    for (;;) {
        while (!timers_.empty() && timers_.begin()->first.first <= now_ps()) fire();
        if (timers_.empty() && in_flight_ == 0) return true;
        uint64_t limit = timers_.empty() ? FOREVER : timers_.begin()->first.first;
        FsStatus st = fs_run_until_completion(session_, limit);
        check(st, "fabricsim run");
        size_t got = 0;
        while ((got = fs_completions(session_, batch, 256)) > 0) {
            for (size_t i = 0; i < got; i++) arrived(batch[i].tag);
        }
        if (st == FS_ENDED) {
            status_ = "the fabricsim run ended before the workload (a guard of its scenario: stop.max_time, max_events, no progress)";
            return false;
        }
    }
}

int FabricsimNetworkApi::sim_send(void*, uint64_t count, int, int dst, int tag, AstraSim::sim_request*,
                                  void (*msg_handler)(void*), void* fun_arg) {
    backend_.send(sim_comm_get_rank(), dst, tag, count, msg_handler, fun_arg);
    return 0;
}

int FabricsimNetworkApi::sim_recv(void*, uint64_t count, int, int src, int tag, AstraSim::sim_request*,
                                  void (*msg_handler)(void*), void* fun_arg) {
    backend_.recv(src, sim_comm_get_rank(), tag, count, msg_handler, fun_arg);
    return 0;
}

void FabricsimNetworkApi::sim_schedule(AstraSim::timespec_t delta, void (*fun_ptr)(void*), void* fun_arg) {
    // both below 2^63: the sum does not wrap
    backend_.schedule_at(backend_.now_ps() + to_ps(delta), fun_ptr, fun_arg);
}

AstraSim::timespec_t FabricsimNetworkApi::sim_get_time() {
    return AstraSim::timespec_t{AstraSim::NS, static_cast<long double>(backend_.now_ps()) / 1e3L};
}

void FabricsimNetworkApi::sim_notify_finished() { backend_.finished(sim_comm_get_rank()); }

}  // namespace Fabricsim
