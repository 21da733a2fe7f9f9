//! Least-cost paths for the forwarding tables of a graph whose links have costs.

/// Least costs to `edge` (`d`, its entry 0, the rest `u32::MAX`) backwards over the
/// switch-to-switch ports (`into[w]`: the near ends and costs of the ports into `w`; `out[v]`:
/// `v`'s ports and far ends), and per node the most links of a least-cost path (`links`):
/// Dijkstra's algorithm. A node's links are set when it is settled, from its least-cost next
/// hops, all settled before it (every cost is at least 1).
pub(super) fn least_costs(
    edge: u32,
    into: &[Vec<(u32, u32)>],
    out: &[Vec<(u32, u32)>],
    cost: impl Fn(u32) -> u32,
    d: &mut [u32],
    links: &mut [u32],
) {
    use std::cmp::Reverse;
    let mut heap = std::collections::BinaryHeap::from([Reverse((0u32, edge))]);
    links[edge as usize] = 0;
    while let Some(Reverse((dw, w))) = heap.pop() {
        if dw > d[w as usize] {
            continue; // settled before, at less
        }
        if w != edge {
            let on_path = out[w as usize].iter().filter(|&&(p, to)| d[to as usize].saturating_add(cost(p)) == dw);
            links[w as usize] = on_path.map(|&(_, to)| links[to as usize] + 1).max().unwrap_or(0);
        }
        for &(v, c) in &into[w as usize] {
            let dv = dw.saturating_add(c);
            if dv < d[v as usize] {
                d[v as usize] = dv;
                heap.push(Reverse((dv, v)));
            }
        }
    }
}
