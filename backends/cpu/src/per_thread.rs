//! One value per thread of the pool (an accumulator as wide as C), made
//! when the thread first needs it and kept for every chunk it takes.

use std::sync::Mutex;

/// A slot per thread of the current pool.
pub(crate) struct PerThread<A> {
    slots: Vec<Mutex<Option<A>>>,
}

impl<A> PerThread<A> {
    /// Empty slots for the threads of the pool this is called in.
    pub fn new() -> Self {
        Self {
            slots: (0..rayon::current_num_threads().max(1))
                .map(|_| Mutex::new(None))
                .collect(),
        }
    }

    /// Runs `f` with this thread's value, made by `make` the first time
    /// (each thread has a slot of its own, so the lock is never contended).
    pub fn with<R>(&self, make: impl FnOnce() -> A, f: impl FnOnce(&mut A) -> R) -> R {
        let i = rayon::current_thread_index().unwrap_or(0) % self.slots.len();
        let mut slot = self.slots[i].lock().unwrap_or_else(|e| e.into_inner());
        f(slot.get_or_insert_with(make))
    }
}
