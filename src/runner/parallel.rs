//! A small pool of scoped threads that map a function over a slice.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// Calls `f` on every item using up to `jobs` threads, and returns the results in the order of
/// `items` (whatever order they finished in).
///
/// `jobs == 0` means one thread per available CPU. With one job, or at most one item, `f`
/// runs on the calling thread. Items are handed out one at a time, so a slow item does not
/// hold up a batch. If `f` panics, the panic is propagated once all threads have stopped.
pub fn run_parallel<T, R, F>(jobs: usize, items: &[T], f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let jobs = match jobs {
        0 => thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(items.len());
    if jobs <= 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else {
                return done;
            };
            done.push((index, f(item)));
        }
    };
    let mut slots: Vec<Option<R>> = thread::scope(|scope| {
        // The calling thread is one of the workers. A thread the system refuses to create
        // only lowers the parallelism.
        let handles: Vec<_> = (1..jobs)
            .filter_map(|_| thread::Builder::new().spawn_scoped(scope, worker).ok())
            .collect();
        let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
        let mut store = |done: Vec<(usize, R)>| {
            for (index, result) in done {
                slots[index] = Some(result);
            }
        };
        store(worker());
        for handle in handles {
            match handle.join() {
                Ok(done) => store(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        slots
    });
    slots.iter_mut().filter_map(Option::take).collect()
}
