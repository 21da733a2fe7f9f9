//! Training jobs (`[[jobs]] model`): iterations of a transformer under tensor, pipeline, data
//! and expert parallelism, as compute tasks and dependent messages.

use super::{fabric128, run, scenario};
use fabricsim_core::engine::rng::{Rng, Stream};
use fabricsim_core::Simulation;

/// `servers` servers of 4 GPUs, rail-optimized, a 7.2 Tb/s scale-up network, and `extra`.
fn cluster(hosts: u32, extra: &str) -> String {
    format!(
        "seed = 3\n[topology]\nhosts = {hosts}\nradix = 8\nnics_per_server = 4\nrails = true\nlink_latency = \"1us\"\n\
         switch_latency = \"100ns\"\nscale_up_rate = \"7200Gbps\"\n{extra}"
    )
}

const TINY: &str = "model = { layers = 4, hidden = 1024, seq = 512, vocab = 8000 }";

#[test]
fn a_training_iteration_runs_and_reports_its_ideal_and_compute_only_time() {
    let r = run(&cluster(
        32,
        &format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nname = \"dense\"\nranks = 32\n{TINY}\nparallel = {{ tp = 4, pp = 2, dp = 4, micro_batches = 4, gpu_tflops = 100 }}\niterations = 2\ncompute = \"5us\"\n"),
    ));
    assert_eq!(r.summary.status, "complete");
    assert_eq!(r.jobs.str("collective"), &["training", "training"]);
    let (jct, ideal, free) = (r.jobs.opt_u64("jct_ps"), r.jobs.u64("ideal_jct_ps"), r.jobs.opt_u64("compute_only_ps"));
    let exposed = r.jobs.opt_u64("exposed_comm_ps");
    for it in 0..2 {
        let (j, i, f) = (jct[it].unwrap(), ideal[it], free[it].unwrap());
        assert!(j >= i && i >= f && f > 0, "iteration {it}: {j} >= {i} >= {f}");
        assert_eq!(exposed[it], Some(j - f));
    }
    // the flows table has the messages only; the steps table each kind of work
    assert!(r.flows.u64("bytes").iter().all(|&b| b > 0));
    let kinds: Vec<&str> = r.steps.str("kind").iter().take(4).map(String::as_str).collect();
    assert_eq!(kinds, ["compute", "tp", "pp", "dp"]);
    // tensor parallelism inside a server: all of it on the scale-up network; pipeline and data
    // parallelism cross servers on the fabric
    let (bytes, up) = (r.steps.u64("bytes"), r.steps.u64("scale_up_bytes"));
    assert_eq!((bytes[0], up[0]), (0, 0), "compute moves no bytes");
    assert!(bytes[1] > 0 && up[1] == bytes[1], "tp: {} of {}", up[1], bytes[1]);
    assert!(bytes[2] > 0 && up[2] == 0 && bytes[3] > 0 && up[3] == 0, "pp and dp on the fabric");
    assert_eq!(r.flows.u64("flow").len(), r.flows.bool("scale_up").len());
}

#[test]
fn compute_only_time_is_megatrons_flops_over_the_gpu_rate() {
    // one stage, one replica: 4 tensor-parallel ranks each compute, per micro-batch,
    // 3 x (24 b s h^2 + 4 b s^2 h) per layer and 3 x 2 b s h V for the logits, over 4
    let r = run(&cluster(16, &format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 4\n{TINY}\nparallel = {{ tp = 4, micro_batches = 3, gpu_tflops = 100 }}\n")));
    let (s, h, v) = (512f64, 1024f64, 8000f64);
    let layer = 24.0 * s * h * h + 4.0 * s * s * h;
    let per_pass = |flops: f64| (flops / 4.0 / 100.0).round() as u64; // 100 TFLOP/s = 100 FLOP/ps
    let (attention, mlp) = (8.0 * s * h * h + 4.0 * s * s * h, 16.0 * s * h * h);
    assert_eq!(attention + mlp, layer);
    let fwd = 4 * (per_pass(attention) + per_pass(mlp)) + per_pass(2.0 * s * h * v);
    let bwd = 4 * (per_pass(2.0 * attention) + per_pass(2.0 * mlp)) + per_pass(4.0 * s * h * v);
    assert_eq!(r.jobs.opt_u64("compute_only_ps")[0], Some(3 * (fwd + bwd)));
}

#[test]
fn iteration_time_bounds_its_ideal_which_bounds_its_compute_over_random_layouts() {
    let mut rng = Rng::stream(7, Stream::Workload, 0);
    for case in 0..12 {
        let pick = |rng: &mut Rng, of: &[u32]| of[rng.below(of.len() as u64) as usize];
        let (tp, pp) = (pick(&mut rng, &[1, 2, 4]), pick(&mut rng, &[1, 2, 4]));
        let dp = pick(&mut rng, &[1, 2, 4]).min(32 / (tp * pp)).max(1);
        let moe = rng.below(2) == 1;
        let ep = if moe { pick(&mut rng, &[1, 2, 4]).min(dp) } else { 1 };
        let ep = if dp % ep == 0 { ep } else { 1 };
        let model = if moe {
            "model = { layers = 4, hidden = 512, seq = 256, vocab = 4000, experts = 4, top_k = 2, gated = true }"
        } else {
            "model = { layers = 4, hidden = 512, seq = 256, vocab = 4000 }"
        };
        let lb = pick(&mut rng, &[0, 1, 2]);
        let lb = ["ecmp", "ops", "arcane"][lb as usize];
        let mb = pick(&mut rng, &[1, 2, 4, 5]);
        // the interleaved schedule where Megatron-LM allows it (4 layers: 2 chunks on 2 stages)
        let vpp = if pp == 2 && mb % 2 == 0 { pick(&mut rng, &[1, 2]) } else { 1 };
        // context parallelism where it fits (no expert parallelism, 32 ranks at most)
        let cp = if ep == 1 && tp * pp * dp <= 16 { pick(&mut rng, &[1, 2]) } else { 1 };
        // a job has 2 ranks at least
        let dp = if tp * cp * pp * dp == 1 { 2 } else { dp };
        // every other case on the fabric alone, the others with NCCL's costs (the default)
        let costs = if case % 2 == 0 { "" } else { "costs = \"none\"\nprotocol = \"simple\"\n" };
        let text = cluster(
            32,
            &format!(
                "[lb]\nkind = \"{lb}\"\n[[jobs]]\n{costs}ranks = {}\nplacement = \"random\"\n{model}\nparallel = {{ tp = {tp}, cp = {cp}, pp = {pp}, vpp = {vpp}, dp = {dp}, ep = {ep}, micro_batches = {mb}, gpu_tflops = 50, bucket = \"1MiB\" }}\niterations = 2\n",
                tp * cp * pp * dp
            ),
        );
        let r = Simulation::new(&scenario(&text).unwrap()).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}")).run();
        assert_eq!(r.summary.status, "complete", "case {case}");
        let (jct, ideal, free) = (r.jobs.opt_u64("jct_ps"), r.jobs.u64("ideal_jct_ps"), r.jobs.opt_u64("compute_only_ps"));
        for it in 0..2 {
            let (j, i, f) = (jct[it].unwrap(), ideal[it], free[it].unwrap());
            assert!(j >= i && i >= f, "case {case} iteration {it}: {j} >= {i} >= {f}\n{text}");
        }
    }
}

#[test]
fn a_layout_that_does_not_fit_the_ranks_or_the_model_is_refused() {
    for (par, field) in [
        ("tp = 4, pp = 2, dp = 3, gpu_tflops = 1", "jobs[0].ranks"),
        ("pp = 8, gpu_tflops = 1", "jobs[0].parallel.pp"),
        ("tp = 4, ep = 2, gpu_tflops = 1", "jobs[0].parallel.ep"),
        ("tp = 4", "jobs[0].parallel.gpu_tflops"),
        ("tp = 4, gpu_tflops = -1", "jobs[0].parallel.gpu_tflops"),
        ("tp = 4, gpu_tflops = 1, grad_dtype = \"fp16\"", "jobs[0].parallel.grad_dtype"),
        ("tp = 4, gpu_tflops = 1, recompute = \"some\"", "jobs[0].parallel.recompute"),
    ] {
        let text = cluster(16, &format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\n{TINY}\nparallel = {{ {par} }}\n"));
        let e = Simulation::new(&scenario(&text).unwrap()).err().unwrap_or_else(|| panic!("{par} accepted"));
        assert_eq!(e.field, field, "{par}: {e}");
    }
    // too large to count, or to hold: refused before any message is made
    let huge = cluster(16, "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\nmodel = { layers = 16777216, hidden = 16777216, ffn = 16777216, seq = 16777216, vocab = 16777216, experts = 65536, top_k = 65536 }\nparallel = { tp = 4, micro_batch_size = 65536, gpu_tflops = 1 }\n");
    assert_eq!(Simulation::new(&scenario(&huge).unwrap()).err().unwrap().field, "jobs[0].model");
    let long = cluster(16, "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\nmodel = { layers = 16777216, hidden = 64, seq = 64, vocab = 64 }\nparallel = { tp = 4, micro_batches = 65536, gpu_tflops = 1 }\n");
    assert_eq!(Simulation::new(&scenario(&long).unwrap()).err().unwrap().field, "workload", "more messages than a run numbers");
    let long = cluster(16, "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\nmodel = { layers = 4096, hidden = 64, seq = 64, vocab = 64 }\nparallel = { tp = 4, micro_batches = 1024, gpu_tflops = 1 }\n");
    let e = Simulation::new(&scenario(&long).unwrap()).err().unwrap();
    assert_eq!(e.field, "stop.max_memory", "more than the memory holds: {e}");
    let both = cluster(
        16,
        &format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\ncollective = \"allreduce\"\nsize = \"1MiB\"\n{TINY}\n"),
    );
    assert_eq!(Simulation::new(&scenario(&both).unwrap()).err().unwrap().field, "jobs[0].model");
    // grouped-query attention: key/value heads dividing the heads, at most hidden heads
    for (model, field) in [
        ("model = { layers = 4, hidden = 1024, seq = 512, vocab = 8000, heads = 8, kv_heads = 3 }", "jobs[0].model.kv_heads"),
        ("model = { layers = 4, hidden = 1024, seq = 512, vocab = 8000, heads = 2048 }", "jobs[0].model.heads"),
    ] {
        let text = cluster(
            16,
            &format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\n{model}\nparallel = {{ tp = 4, gpu_tflops = 1 }}\n"),
        );
        assert_eq!(Simulation::new(&scenario(&text).unwrap()).err().unwrap().field, field, "{model}");
    }
    // a preset's name alone stands for the table with that preset
    let named =
        cluster(16, "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\nmodel = \"gpt5\"\nparallel = { gpu_tflops = 1 }\n");
    assert_eq!(Simulation::new(&scenario(&named).unwrap()).err().unwrap().field, "jobs[0].model.preset");
    let named = cluster(16, "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\nmodel = \"gpt3-1.3b\"\nparallel = { tp = 4, pp = 2, gpu_tflops = 1 }\n");
    assert!(Simulation::new(&scenario(&named).unwrap()).is_ok());
    // a collective's knobs, which a training job's traffic does not read: refused, not ignored
    for (knob, field) in [("size = \"1MiB\"", "jobs[0].size"), ("channels = 4", "jobs[0].channels"), ("slice = \"1MiB\"", "jobs[0].slice")]
    {
        let text = cluster(
            16,
            &format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\n{knob}\n{TINY}\nparallel = {{ gpu_tflops = 1 }}\n"),
        );
        assert_eq!(Simulation::new(&scenario(&text).unwrap()).err().unwrap().field, field, "{knob}");
    }
    // its queue pairs a connection are its own
    let qps = cluster(
        16,
        &format!(
            "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 8\nqps = 2\n{TINY}\nparallel = {{ tp = 4, gpu_tflops = 1 }}\n"
        ),
    );
    let model = scenario(&qps).unwrap().resolve().unwrap();
    assert!(model.messages.iter().any(|m| m.qp == 1) && model.messages.iter().all(|m| m.qp < 2));
}

#[test]
fn training_runs_give_the_same_tables_in_any_pieces_and_threads() {
    let text = cluster(
        32,
        "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 32\nmodel = { layers = 2, hidden = 512, seq = 256, vocab = 4000, experts = 4, top_k = 2 }\nparallel = { tp = 4, pp = 2, dp = 4, ep = 2, micro_batches = 2, gpu_tflops = 50 }\n",
    );
    let s = scenario(&text).unwrap();
    let one = Simulation::new(&s).unwrap().run();
    assert_eq!(one.summary.status, "complete");
    for threads in [2, 3] {
        let r = Simulation::with_threads(&s, threads).unwrap().run();
        assert_eq!((r.flows, r.jobs, r.steps), (one.flows.clone(), one.jobs.clone(), one.steps.clone()), "{threads} threads");
    }
}

/// Bytes each kind of traffic (tp, pp, dp, ep) puts on the wire in one iteration, summed over
/// every GPU: the closed forms of docs/workloads.md ("Bytes per GPU"), from the shape and the
/// layout alone. `ends(p)`: the embedding matrices stage p holds (the input embedding on the
/// first, the output layer on the last).
fn bytes_by_formula(text: &str) -> [u64; 5] {
    let sc = scenario(text).expect("valid");
    let job = &sc.jobs[0];
    let shape = job.model.as_ref().unwrap().resolve("m").unwrap();
    let par = job.parallel.as_ref().unwrap();
    let l = par.resolve("jobs[0]", job.ranks.unwrap() as usize, &shape).unwrap();
    let (tp, pp, dp, ep, m) = (l.tp as u64, l.pp as u64, l.dp as u64, l.ep as u64, l.micro_batches as u64);
    let act = l.micro_batch_size * shape.seq * shape.hidden * 2;
    let passes = if l.recompute == fabricsim_core::workload::training::Recompute::Full { 3 } else { 2 };
    let moe = u64::from(shape.moe());
    // tp: per layer and pass, two ring collectives of the activations over each group of tp
    // (an allreduce, or an all-gather and a reduce-scatter: the same bytes), 2 (tp - 1) x act
    // sent by the group for each
    let tp_bytes = dp * pp * (shape.layers / pp) * m * passes * 2 * 2 * (tp - 1) * act;
    // pp: each micro-batch's activations forward and their gradients back across each of the
    // pp - 1 stage boundaries, each GPU its 1/tp share
    let pp_bytes = dp * tp * m * 2 * (pp - 1) * (act / tp);
    // dp: each stage's gradients (its layers' parameters and its embeddings, over tp) in
    // grad_dtype, reduced by a ring over the dp replicas: an allreduce sends 2 (dp - 1) x G,
    // the distributed optimizer (dp - 1) x (G + G as bf16); experts' over dp / ep replicas
    let (dense, expert) = shape.layer_params();
    let g = l.grad_bytes;
    let ring = |group: u64, grads: u64| {
        if l.distributed_optimizer {
            (group - 1) * (grads + grads / g * 2)
        } else {
            2 * (group - 1) * grads
        }
    };
    let mut dp_bytes = 0;
    for p in 0..pp {
        let ends = u64::from(p == 0) + u64::from(p == pp - 1);
        let layers = shape.layers / pp;
        let dense_g = layers * (dense / tp * g) + ends * shape.embedding_params() / tp * g;
        let expert_g = layers * (shape.experts / ep * expert / tp * g);
        dp_bytes += tp * ring(dp, dense_g);
        if expert_g > 0 && dp / ep > 1 {
            dp_bytes += tp * ep * ring(dp / ep, expert_g);
        }
    }
    // ep: per MoE layer and pass two all-to-alls over each group of ep, each rank's tokens
    // (b s top_k h x 2 B over tp, times the experts' load c: 1 dropless, min(c, 1) with a
    // capacity factor c, c padded to capacity), (ep - 1) x that per group
    let even = l.micro_batch_size * shape.seq * shape.top_k * shape.hidden * 2 / tp;
    let a2a = (u128::from(even) * u128::from(shape.load_ppm) / 1_000_000) as u64;
    let ep_bytes = moe * (dp / ep) * tp * pp * (shape.layers / pp) * m * passes * 2 * (ep - 1) * a2a;
    [0, tp_bytes, pp_bytes, dp_bytes, ep_bytes]
}

/// The same, from the messages the generator made.
fn bytes_generated(text: &str) -> [u64; 5] {
    let model = scenario(text).expect("valid").resolve().expect("resolves");
    let mut by = [0u64; 5];
    for (m, tag) in model.messages.iter().zip(&model.tags) {
        if m.src != m.dst {
            by[tag.step as usize] += m.bytes;
        }
    }
    by
}

#[test]
fn each_kinds_bytes_per_gpu_equal_the_documented_formulas() {
    // the data's bytes: Simple (LL and LL128 add their flags on the wire), on the ring (the
    // formulas are the ring's; NVLS's two legs a GPU: tests/integration/nvls.rs)
    let simple = |t: String| t.replace("[[jobs]]\n", "[[jobs]]\nprotocol = \"simple\"\nalgorithm = \"ring\"\n");
    let dense = simple(std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/training_dense_256.toml")).unwrap());
    let moe = simple(std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/training_moe_256.toml")).unwrap());
    let with = |base: &str, extra: &str| base.replace("gpu_tflops = 400", &format!("gpu_tflops = 400, {extra}"));
    let published = |model: &str, par: &str| {
        format!(
            "[topology]\nhosts = 64\nradix = 16\nnics_per_server = 8\nrails = true\nscale_up_rate = \"7200Gbps\"\n\
             [[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nalgorithm = \"ring\"\nranks = 64\nmodel = {{ {model} }}\nparallel = {{ {par}, gpu_tflops = 400 }}\n"
        )
    };
    let cases = [
        dense.clone(),
        with(&dense, "grad_dtype = \"bf16\""),
        with(&dense, "distributed_optimizer = true"),
        with(&dense, "sequence_parallel = true, recompute = \"full\""),
        moe.clone(),
        with(&moe, "distributed_optimizer = true, recompute = \"selective\""),
        // published shapes (fewer layers, so that the test stays fast: the counts are per layer)
        published("preset = \"llama2-70b\", layers = 8", "tp = 4, pp = 2, dp = 8, micro_batches = 2"),
        published("preset = \"gpt3-175b\", layers = 4", "tp = 8, pp = 2, dp = 4, micro_batches = 2, distributed_optimizer = true"),
        published("preset = \"mixtral-8x7b\", layers = 4", "tp = 2, pp = 2, dp = 16, ep = 4, micro_batches = 2"),
        published(
            "preset = \"mixtral-8x7b\", layers = 4, capacity_factor = 1.5, pad_to_capacity = true",
            "tp = 2, pp = 2, dp = 16, ep = 4, micro_batches = 2",
        ),
        published("preset = \"mixtral-8x7b\", layers = 4, capacity_factor = 0.75", "tp = 2, pp = 2, dp = 16, ep = 4, micro_batches = 2"),
    ];
    for (i, text) in cases.iter().enumerate() {
        assert_eq!(bytes_generated(text), bytes_by_formula(text), "case {i}: [compute, tp, pp, dp, ep] bytes");
    }
    // the shipped dense scenario (GPT-3 XL, tp 8, pp 4, dp 8): Megatron-LM's fp32 gradients
    // allreduced, 309.3 MB per GPU (2 x 7/8 of 1.414 B parameters / 32 x 4 B); 154.6 MB in bf16;
    // 232.0 MB with the distributed optimizer (7/8 x (4 + 2) B a parameter)
    let per_gpu = |text: &str| bytes_generated(text)[3] as f64 / 256.0 / 1e6;
    for (text, mb) in
        [(dense.clone(), 309.3), (with(&dense, "grad_dtype = \"bf16\""), 154.6), (with(&dense, "distributed_optimizer = true"), 232.0)]
    {
        assert!((per_gpu(&text) - mb).abs() < 0.1, "{} MB per GPU against {mb}", per_gpu(&text));
    }
}

/// The jobs' bounds (the ideal spans of the jobs and steps tables, computed at resolve) are
/// the same from the one pass over the messages in order as from the whole schedule, on
/// training jobs, collectives, and a flow list with CPUs (as a trace job); and a flow list
/// that waits for a later flow takes the whole schedule.
#[test]
fn the_jobs_bounds_from_one_pass_are_the_whole_schedules() {
    let file = |name: &str| std::fs::read_to_string(format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let flows = |list: &str| format!("[topology]\nhosts = 16\nradix = 8\n[workload]\nkind = \"flows\"\nflows = [{list}]\n");
    let cases = [
        file("training_dense_256.toml"),
        file("training_moe_256.toml"),
        file("china_mobile_8_jobs.toml"),
        file("allreduce_ring_128.toml"),
        flows(
            "{id = 11, src = 0, dst = 9, size = \"1MiB\"}, {id = 12, src = 9, dst = 3, size = \"1MiB\", after = [11], delay = \"20us\", cpu = 0}, \
             {id = 13, src = 9, dst = 4, size = \"64KiB\", after = [11], delay = \"30us\", cpu = 0}, {src = 3, dst = 0, size = \"8KiB\", after = [12, 13]}",
        ),
        // waits for a later flow: not in order
        flows("{id = 11, src = 0, dst = 9, size = \"1MiB\", after = [12]}, {id = 12, src = 9, dst = 3, size = \"1MiB\", cpu = 1, delay = \"1us\"}"),
    ];
    for (i, text) in cases.iter().enumerate() {
        let m = scenario(text).expect("valid").resolve().expect("resolves");
        let routes = fabricsim_core::topology::Routes::new(m.topo.clone());
        let plan = fabricsim_core::stats::jobs::Plan {
            routes: &routes,
            transport: &m.transport,
            specs: &m.messages,
            subflows: m.lb.subflows(),
            deps: &m.deps,
            tags: &m.tags,
            jobs: &m.jobs,
        };
        let pass = fabricsim_core::stats::jobs::bounds(&plan);
        assert_eq!(pass, fabricsim_core::stats::jobs::bounds_whole(&plan), "case {i}");
        assert_eq!(pass, m.job_bounds, "case {i}: the model's");
        assert_ne!(pass, Default::default(), "case {i}: some job");
    }
}

#[test]
fn data_parallel_rings_stay_on_a_rail_where_the_placement_allows() {
    // 4 servers of 4 GPUs, tensor parallelism 2: each data-parallel group holds two GPUs of
    // every server (local 0 and 2, or 1 and 3). Its ring crosses the servers' scale-up network
    // inside a server and leaves it on the GPU of the local index the next server is entered by
    // (NCCL's rings on rails): every hop between servers joins two GPUs of one local index
    let text = cluster(
        16,
        &format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nranks = 16\n{TINY}\nparallel = {{ tp = 2, gpu_tflops = 100 }}\n"),
    );
    let model = scenario(&text).unwrap().resolve().unwrap();
    let dp = 3; // the steps table's kinds: compute, tp, pp, dp, ep
    let (mut across, mut inside) = (0, 0);
    for (m, tag) in model.messages.iter().zip(&model.tags).filter(|(m, t)| t.step == dp && m.src != m.dst) {
        if m.src / 4 == m.dst / 4 {
            inside += 1;
        } else {
            across += 1;
            assert_eq!(m.src % 4, m.dst % 4, "a hop between servers stays on its rail: {} -> {} ({tag:?})", m.src, m.dst);
        }
    }
    assert!(across > 0 && inside > 0, "{across} hops across servers, {inside} inside");
}

#[test]
fn the_interleaved_schedule_shrinks_the_pipeline_bubble_by_its_chunks() {
    // 4 pipeline stages, 8 micro-batches, equal stages (16 layers, a vocabulary of 8: the
    // output layer's compute is negligible): with compute alone, 1F1B takes (m + pp - 1)
    // passes' time and the interleaved schedule with v chunks (m + (pp - 1) / v) (Narayanan
    // et al., SC 2021, sec. 2.2.2: a bubble of (pp - 1) / (v m) of the ideal)
    let text = |vpp: u32| {
        fabric128(&format!(
            "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nmodel = {{ layers = 16, hidden = 1024, seq = 1024, vocab = 8 }}\nranks = 4\n\
             parallel = {{ pp = 4, micro_batches = 8, gpu_tflops = 100, vpp = {vpp} }}\n"
        ))
    };
    let free = |vpp: u32| run(&text(vpp)).jobs.opt_u64("compute_only_ps")[0].unwrap() as f64;
    let (one, two, four) = (free(1), free(2), free(4));
    for (t, v) in [(two, 2.0), (four, 4.0)] {
        let want = (8.0 + 3.0 / v) / (8.0 + 3.0);
        assert!((t / one - want).abs() < 0.005, "vpp {v}: {} against {want}", t / one);
    }
    // the run itself: twice the pipeline's sends, and still faster
    let (a, b) = (run(&text(1)), run(&text(2)));
    assert!(b.jobs.opt_u64("jct_ps")[0].unwrap() < a.jobs.opt_u64("jct_ps")[0].unwrap());
    let pp_bytes = |r: &fabricsim_core::stats::RunResult| -> u64 {
        let (bytes, kinds) = (r.steps.u64("bytes"), r.steps.str("kind"));
        (0..bytes.len()).filter(|&i| kinds[i] == "pp").map(|i| bytes[i]).sum()
    };
    // 2 (pp v - 1) boundaries a micro-batch against 2 (pp - 1)
    assert_eq!(pp_bytes(&b) * 3, pp_bytes(&a) * 7);
    // Megatron-LM's conditions, refused by field
    for (parallel, field) in [
        ("pp = 4, micro_batches = 6, gpu_tflops = 100, vpp = 2", "jobs[0].parallel.micro_batches"),
        ("pp = 4, micro_batches = 8, gpu_tflops = 100, vpp = 3", "jobs[0].parallel.vpp"),
        ("pp = 1, micro_batches = 8, gpu_tflops = 100, vpp = 2", "jobs[0].parallel.vpp"),
    ] {
        let t = fabric128(&format!(
            "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\nmodel = {{ layers = 16, hidden = 1024, seq = 1024, vocab = 8 }}\nranks = 4\nparallel = {{ {parallel} }}\n"
        ));
        let err = Simulation::new(&scenario(&t).unwrap()).err().expect(parallel);
        assert_eq!(err.field, field, "{parallel}: {}", err.message);
    }
}

#[test]
fn context_parallel_ranks_split_the_tokens_and_pass_keys_and_values_around_a_ring() {
    // grouped-query attention (8 heads, 2 of keys and values), a 4 096-token sequence; 8 ranks
    // as tp 2 x cp 2 x dp 2 against tp 2 x dp 4: a context-parallel rank holds half the tokens
    let model = "model = { layers = 4, hidden = 1024, heads = 8, kv_heads = 2, seq = 4096, vocab = 1000 }";
    let text = |par: &str| {
        fabric128(&format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\n{model}\nranks = 8\nparallel = {{ {par}, micro_batches = 2, gpu_tflops = 100 }}\n"))
    };
    let (cp, dp) = (run(&text("tp = 2, cp = 2, dp = 2")), run(&text("tp = 2, dp = 4")));
    assert_eq!((cp.summary.status, dp.summary.status), ("complete", "complete"));
    let kind = |r: &fabricsim_core::stats::RunResult, k: &str| -> u64 {
        let (bytes, kinds) = (r.steps.u64("bytes"), r.steps.str("kind"));
        (0..bytes.len()).filter(|&i| kinds[i] == k).map(|i| bytes[i]).sum()
    };
    // each rank computes half the tokens: half the compute
    let free = |r: &fabricsim_core::stats::RunResult| r.jobs.opt_u64("compute_only_ps")[0].unwrap() as f64;
    assert!((free(&cp) * 2.0 / free(&dp) - 1.0).abs() < 1e-6, "{} against {}", free(&cp), free(&dp));
    // a rank's keys and values: 2 x 2 048 tokens x 2 heads x 128 / tp 2 x 2 B = 1 MiB, sent
    // once forward and twice backward (with their gradients) per layer and micro-batch
    let kv = 2 * 2048 * 2 * 128 / 2 * 2;
    assert_eq!(kv, 1 << 20);
    assert_eq!(kind(&cp, "cp"), 8 * 2 * 4 * 3 * kv);
    assert_eq!(kind(&dp, "cp"), 0);
    // the tensor-parallel collectives carry half the activations; the gradients are reduced
    // over dp x cp = 4 ranks in both
    assert_eq!(2 * kind(&cp, "tp"), kind(&dp, "tp"));
    assert_eq!(kind(&cp, "dp"), kind(&dp, "dp"));
    // Megatron-LM's conditions, refused by field
    for (extra, field) in [("tp = 2, cp = 3, dp = 1", "jobs[0].parallel.cp"), ("tp = 2, cp = 2, dp = 1", "jobs[0].ranks")] {
        let t = fabric128(&format!(
            "[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\n{model}\nranks = 6\nparallel = {{ {extra}, gpu_tflops = 100 }}\n"
        ));
        let err = Simulation::new(&scenario(&t).unwrap()).err().expect(extra);
        assert_eq!(err.field, field, "{extra}: {}", err.message);
    }
    let moe = "model = { layers = 4, hidden = 1024, seq = 4096, vocab = 1000, experts = 4 }";
    let t = fabric128(&format!("[[jobs]]\ncosts = \"none\"\nprotocol = \"simple\"\n{moe}\nranks = 8\nparallel = {{ tp = 2, cp = 2, dp = 2, ep = 2, gpu_tflops = 100 }}\n"));
    assert_eq!(Simulation::new(&scenario(&t).unwrap()).err().expect("ep").field, "jobs[0].parallel.cp");
}
