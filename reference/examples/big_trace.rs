//! Writes a long valid trace to stdout for benchmarks: `big_trace [COMMANDS] [SEED]`.
//! Three followers under constant load, one of them stalling now and then, produces and STATUS.

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(5_000_000);
    let mut seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut rng = move || {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out.lock());
    writeln!(w, "REPLICAS 3 1 2 4\nLAG_MAX 500\nMIN_ISR 1").unwrap();
    let followers = [1u64, 2, 4];
    let mut leo = 0u64;
    let mut seen = [0u64; 3];
    let mut t = 0u64;
    for _ in 0..n {
        t += rng() % 3;
        let r = rng() % 100;
        if r < 30 {
            let k = 1 + rng() % 5;
            leo += k;
            writeln!(w, "{t} APPEND {k}").unwrap();
        } else if r < 40 {
            let k = 1 + rng() % 5;
            writeln!(w, "{t} PRODUCE {k}").unwrap();
            leo += k; // MIN_ISR 1: never refused
        } else if r < 97 {
            let f = (rng() % 3) as usize;
            // Ask for what the leader had at this follower's previous fetch (constant load), or a
            // bit less now and then.
            let o = if rng() % 10 == 0 {
                seen[f].saturating_sub(1)
            } else {
                seen[f]
            };
            writeln!(w, "{t} FETCH {} {o}", followers[f]).unwrap();
            seen[f] = leo;
        } else {
            writeln!(w, "{t} STATUS").unwrap();
        }
    }
    w.flush().unwrap();
}
