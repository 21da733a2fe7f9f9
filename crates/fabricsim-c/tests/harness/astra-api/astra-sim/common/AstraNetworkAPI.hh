// ASTRA-sim's network backend interface (astra-sim/common/AstraNetworkAPI.hh, unchanged in
// ASTRA-sim since 2025-02), its calls declared here with the same signatures so that the
// fabricsim backend compiles and is tested in CI without ASTRA-sim. A real build uses
// ASTRA-sim's own header instead (docs/embedding.md).
#ifndef FABRICSIM_ASTRA_API_NETWORK_HH
#define FABRICSIM_ASTRA_API_NETWORK_HH

#include "astra-sim/system/Common.hh"

namespace AstraSim {

class AstraNetworkAPI {
  public:
    enum class BackendType { NotSpecified = 0, Garnet, NS3, Analytical };

    explicit AstraNetworkAPI(int rank) : rank(rank) {}
    virtual ~AstraNetworkAPI() {}

    virtual int sim_send(void* buffer, uint64_t count, int type, int dst, int tag, sim_request* request,
                         void (*msg_handler)(void* fun_arg), void* fun_arg) = 0;
    virtual int sim_recv(void* buffer, uint64_t count, int type, int src, int tag, sim_request* request,
                         void (*msg_handler)(void* fun_arg), void* fun_arg) = 0;
    virtual void sim_schedule(timespec_t delta, void (*fun_ptr)(void* fun_arg), void* fun_arg) = 0;
    virtual BackendType get_backend_type() { return BackendType::NotSpecified; }
    virtual int sim_comm_get_rank() { return rank; }
    virtual int sim_comm_set_rank(int r) { return rank = r; }
    virtual timespec_t sim_get_time() = 0;
    virtual double get_BW_at_dimension(int) { return -1; }
    virtual void sim_notify_finished() {}

    int rank;
};

}  // namespace AstraSim

#endif
