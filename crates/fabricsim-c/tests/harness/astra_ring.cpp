// The fabricsim ASTRA-sim backend (crates/fabricsim-c/astra-sim), driven as ASTRA-sim's system
// layer drives a backend, without ASTRA-sim: one FabricsimNetworkApi a rank, compiled against
// the interface's declaration in tests/harness/astra-api. A ring allreduce: each rank starts by
// sim_schedule, then per step sim_send to the next rank and sim_recv from the previous one,
// matched by (tag, source, destination, size); the next step starts in the receive's handler;
// each rank calls sim_notify_finished at its end. Checked against fabricsim's own [[jobs]] ring:
// the same JCT to the picosecond, and a second run alike. Usage: astra_ring THREADS
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "FabricsimNetworkApi.hh"
#include "native.hh"

namespace {

const std::string FABRIC = harness::fabric("");

struct Rank;
struct Ring {
    std::vector<std::unique_ptr<Fabricsim::FabricsimNetworkApi>> apis;
    std::vector<Rank*> ranks;
    uint64_t chunk = 0;
    uint64_t last_end_ps = 0;
    Fabricsim::Backend* backend = nullptr;
};

struct Rank {
    Ring* ring;
    int id;
    int step = 0;
    int sends_done = 0;
    static void start(void* self) { static_cast<Rank*>(self)->post(); }
    static void sent(void* self) { static_cast<Rank*>(self)->sends_done++; }
    static void received(void* self) {
        auto* r = static_cast<Rank*>(self);
        r->ring->last_end_ps = r->ring->backend->now_ps();
        int n = int(r->ring->ranks.size());
        if (++r->step < 2 * (n - 1)) {
            r->post();
        } else {
            r->ring->apis[r->id]->sim_notify_finished();
        }
    }
    void post() {
        int n = int(ring->ranks.size());
        auto& api = *ring->apis[id];
        api.sim_send(nullptr, ring->chunk, AstraSim::UINT8, (id + 1) % n, step, nullptr, &Rank::sent, this);
        api.sim_recv(nullptr, ring->chunk, AstraSim::UINT8, (id + n - 1) % n, step, nullptr, &Rank::received, this);
    }
};

// Returns the ring's end (ps), or 0 after printing why it failed.
uint64_t run(uint32_t threads, uint64_t size, int n) {
    std::string scenario = FABRIC + "[transport]\nconnections = \"per_pair\"\n";
    Fabricsim::Backend backend(scenario, threads);
    Ring ring;
    ring.backend = &backend;
    ring.chunk = size / n;
    std::vector<Rank> ranks;
    ranks.reserve(n);
    for (int r = 0; r < n; r++) {
        ring.apis.push_back(std::make_unique<Fabricsim::FabricsimNetworkApi>(r, backend));
        ranks.push_back(Rank{&ring, r});
    }
    for (auto& r : ranks) ring.ranks.push_back(&r);
    for (auto& r : ranks) ring.apis[r.id]->sim_schedule(AstraSim::timespec_t{AstraSim::NS, 0}, &Rank::start, &r);
    if (!backend.run()) {
        std::printf("%s\n", backend.status().c_str());
        return 0;
    }
    int sends = 0;
    for (auto& r : ranks) sends += r.sends_done;
    if (backend.ranks_finished() != n || sends != 2 * (n - 1) * n) {
        std::printf("%d ranks finished, %d sends completed\n", backend.ranks_finished(), sends);
        return 0;
    }
    return ring.last_end_ps;
}

}  // namespace

int main(int argc, char** argv) {
    uint32_t threads = argc > 1 ? uint32_t(std::atoi(argv[1])) : 1;
    const uint64_t size = 4ULL << 20;
    uint64_t want = harness::native_jct("\"0-7\"", size);
    uint64_t a = run(threads, size, 8), b = run(threads, size, 8);
    std::printf("ASTRA-sim API ring, %u thread(s): native %llu ps, backend %llu ps, second run %s\n", threads,
                (unsigned long long)want, (unsigned long long)a, a == b ? "identical" : "DIFFERENT");
    // a scenario fabricsim refuses comes back as an exception with its message
    try {
        Fabricsim::Backend bad(FABRIC + "[transport]\nmtu = \"0B\"\n", 1);
        std::printf("a bad scenario was accepted\n");
        return 1;
    } catch (const std::runtime_error& e) {
        if (std::strstr(e.what(), "transport.mtu") == nullptr) {
            std::printf("refused without naming the field: %s\n", e.what());
            return 1;
        }
    }
    return (want != 0 && a == want && a == b) ? 0 : 1;
}
