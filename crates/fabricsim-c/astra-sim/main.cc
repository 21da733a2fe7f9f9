// ASTRA-sim with fabricsim as its network: the analytical frontend's main, its network a
// fabricsim session. Built inside an ASTRA-sim checkout (docs/embedding.md, "ASTRA-sim"); not
// compiled by fabricsim's own tests (they build FabricsimNetworkApi.cc against the API alone).
//
//   AstraSim_Fabricsim --workload-configuration=W --system-configuration=S.json
//     --remote-memory-configuration=M.json --network-configuration=fabric.toml --npus=N
//     [--comm-group-configuration=C.json] [--threads=T] [--logging-configuration=L]
//     [--logging-folder=log] [--num-queues-per-dim=1] [--comm-scale=1] [--injection-scale=1]
//     [--rendezvous-protocol=false]
//
// --network-configuration is a fabricsim scenario (its fabric, load balancer, transport;
// fabricsim's docs/scenario.md), rank r is its host r, and --npus says how many ranks (the
// system layer sees them as one dimension). At the end it prints fabricsim's clock and its
// summary as JSON.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "FabricsimNetworkApi.hh"
#include "astra-sim/common/Logging.hh"
#include "astra-sim/system/Sys.hh"
#include <remote_memory_backend/analytical/AnalyticalRemoteMemory.hh>

// AnalyticalRemoteMemory's namespace, as ASTRA-sim's analytical main opens it
using namespace Analytical;

namespace {

std::map<std::string, std::string> options(int argc, char** argv) {
    std::map<std::string, std::string> o = {{"comm-group-configuration", "empty"}, {"logging-configuration", "empty"},
                                            {"logging-folder", "log"},             {"num-queues-per-dim", "1"},
                                            {"comm-scale", "1"},                   {"injection-scale", "1"},
                                            {"rendezvous-protocol", "false"},      {"threads", "0"}};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto eq = a.find('=');
        if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
            std::fprintf(stderr, "argument %s: allowed: --name=value\n", a.c_str());
            std::exit(2);
        }
        o[a.substr(2, eq - 2)] = a.substr(eq + 1);
    }
    for (const char* k : {"workload-configuration", "system-configuration", "remote-memory-configuration",
                          "network-configuration", "npus"}) {
        if (!o.count(k)) {
            std::fprintf(stderr, "--%s: required\n", k);
            std::exit(2);
        }
    }
    return o;
}

// ASTRA-sim's logger: init(configuration, folder) in recent versions, init(configuration) in
// those of 2025.
template <typename F = AstraSim::LoggerFactory>
auto init_logging(const std::string& conf, const std::string& folder, int) -> decltype(F::init(conf, folder), void()) {
    F::init(conf, folder);
}
template <typename F = AstraSim::LoggerFactory>
void init_logging(const std::string& conf, const std::string&, long) {
    F::init(conf);
}

std::string read(const std::string& path) {
    std::ifstream f(path);
    if (!f) {
        std::fprintf(stderr, "--network-configuration: cannot read %s\n", path.c_str());
        std::exit(2);
    }
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

int main(int argc, char** argv) {
    auto o = options(argc, argv);
    init_logging(o["logging-configuration"], o["logging-folder"], 0);
    const int npus = std::stoi(o["npus"]);
    try {
        Fabricsim::Backend backend(read(o["network-configuration"]), uint32_t(std::stoul(o["threads"])));
        AnalyticalRemoteMemory memory(o["remote-memory-configuration"]);
        std::vector<std::unique_ptr<Fabricsim::FabricsimNetworkApi>> apis;
        std::vector<AstraSim::Sys*> systems;
        for (int i = 0; i < npus; i++) {
            apis.push_back(std::make_unique<Fabricsim::FabricsimNetworkApi>(i, backend));
            systems.push_back(new AstraSim::Sys(i, o["workload-configuration"], o["comm-group-configuration"],
                                                o["system-configuration"], &memory, apis.back().get(), {npus},
                                                {std::stoi(o["num-queues-per-dim"])}, std::stod(o["injection-scale"]),
                                                std::stod(o["comm-scale"]), o["rendezvous-protocol"] == "true"));
        }
        for (auto* s : systems) s->workload->fire();
        bool complete = backend.run();
        std::printf("fabricsim: %s at %.3f us; %d of %d ranks finished\n", complete ? "done" : backend.status().c_str(),
                    backend.now_ps() / 1e6, backend.ranks_finished(), npus);
        char* json = nullptr;
        if (fs_results_json(backend.session(), &json) == FS_OK) {
            std::string all(json);
            fs_string_free(json);
            auto end = all.find(",\"flows\"");
            std::printf("%s}\n", all.substr(0, end).c_str());
        }
        for (auto* s : systems) delete s;
        AstraSim::LoggerFactory::shutdown();
        return complete ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
}
