// fabricsim as an ASTRA-sim network backend: AstraSim::AstraNetworkAPI over fabricsim's C
// interface (fabricsim.h). One Backend holds the fabricsim session every rank shares; each rank
// gets a FabricsimNetworkApi. Built against ASTRA-sim's own headers (astra-sim/common/
// AstraNetworkAPI.hh), which users fetch with ASTRA-sim; nothing of ASTRA-sim is part of
// fabricsim. docs/embedding.md, "ASTRA-sim", gives the build.
//
// Semantics, as ASTRA-sim's analytical backend has them (its CommonNetworkApi): a send and a
// receive match by (tag, source, destination, size) and, among equal ones, in the order they
// were posted; when the message has arrived, the send's handler runs and then the receive's
// if it was posted; a receive posted after its data arrived runs its handler at once (a
// callback scheduled for the current instant). sim_schedule runs a handler at a time of
// fabricsim's clock; sim_get_time is that clock in ns. A message of 0 bytes is sent as 1 byte
// (fabricsim moves no empty message). Run() returns when every message has arrived and no
// callback is left.
#ifndef FABRICSIM_NETWORK_API_HH
#define FABRICSIM_NETWORK_API_HH

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "astra-sim/common/AstraNetworkAPI.hh"
#include "fabricsim.h"

namespace Fabricsim {

class Backend {
  public:
    using Handler = void (*)(void*);

    // A session of `scenario` (fabricsim's TOML or JSON text: its fabric, load balancer and
    // transport; usually no workload) on `threads` threads (0: fabricsim's choice); rank r is
    // host `hosts[r]` (empty: host r). Throws std::runtime_error with fabricsim's message.
    Backend(const std::string& scenario, uint32_t threads, std::vector<uint32_t> hosts = {});
    ~Backend();
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;

    uint64_t now_ps() const;
    void send(int src, int dst, int tag, uint64_t count, Handler handler, void* arg);
    void recv(int src, int dst, int tag, uint64_t count, Handler handler, void* arg);
    void schedule_at(uint64_t at_ps, Handler handler, void* arg);
    void finished(int rank);

    // Runs until every message has arrived and no callback is left (true), or the fabricsim
    // run ended early, one of its guards stopping it (false; `status()` says which).
    bool run();
    std::string status() const { return status_; }
    int ranks_finished() const { return finished_; }
    FsSession* session() { return session_; }

  private:
    using Key = std::tuple<int, int, int, uint64_t>;  // tag, src, dst, count
    struct Entry {
        Handler send_handler = nullptr;
        void* send_arg = nullptr;
        Handler recv_handler = nullptr;
        void* recv_arg = nullptr;
        bool sent = false;
        bool arrived = false;
    };
    void arrived(uint64_t message);
    void fire();

    FsSession* session_ = nullptr;
    std::vector<uint32_t> hosts_;
    std::map<std::pair<Key, uint64_t>, Entry> entries_;  // (key, chunk) -> callbacks
    std::map<Key, uint64_t> sends_, recvs_;              // the next chunk of each key
    std::vector<std::pair<Key, uint64_t>> messages_;     // fabricsim tag -> (key, chunk)
    std::map<std::pair<uint64_t, uint64_t>, std::pair<Handler, void*>> timers_;  // (time, seq)
    uint64_t seq_ = 0;
    uint64_t in_flight_ = 0;
    int finished_ = 0;
    std::string status_;
};

class FabricsimNetworkApi : public AstraSim::AstraNetworkAPI {
  public:
    FabricsimNetworkApi(int rank, Backend& backend) : AstraNetworkAPI(rank), backend_(backend) {}

    int sim_send(void* buffer, uint64_t count, int type, int dst, int tag, AstraSim::sim_request* request,
                 void (*msg_handler)(void* fun_arg), void* fun_arg) override;
    int sim_recv(void* buffer, uint64_t count, int type, int src, int tag, AstraSim::sim_request* request,
                 void (*msg_handler)(void* fun_arg), void* fun_arg) override;
    void sim_schedule(AstraSim::timespec_t delta, void (*fun_ptr)(void* fun_arg), void* fun_arg) override;
    AstraSim::timespec_t sim_get_time() override;
    void sim_notify_finished() override;

  private:
    Backend& backend_;
};

}  // namespace Fabricsim

#endif
