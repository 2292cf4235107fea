//! A value installed on this thread for the length of one call: the
//! plug-in factories and the record sink that a caller (the Python
//! binding, the CLI) lends the core while it builds and runs simulations.

use std::cell::RefCell;
use std::thread::LocalKey;

/// A thread's slot for such a value (declared with `thread_local!`).
pub type Slot<T> = LocalKey<RefCell<Option<T>>>;

/// Run `f` with `value` in `slot`; whatever the slot held before comes
/// back afterwards, even if `f` panics.
pub fn with<T: 'static, R>(slot: &'static Slot<T>, value: T, f: impl FnOnce() -> R) -> R {
    struct Restore<T: 'static>(&'static Slot<T>, Option<T>);
    impl<T: 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            let prev = self.1.take();
            self.0.with(|s| *s.borrow_mut() = prev);
        }
    }
    let _restore = Restore(slot, slot.with(|s| s.borrow_mut().replace(value)));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static SLOT: RefCell<Option<u32>> = const { RefCell::new(None) };
    }

    /// Nested calls see their own value and get the outer one back after,
    /// also when the inner call panics.
    #[test]
    fn the_previous_value_comes_back() {
        let now = || SLOT.with(|s| *s.borrow());
        with(&SLOT, 1, || {
            assert_eq!(now(), Some(1));
            with(&SLOT, 2, || assert_eq!(now(), Some(2)));
            assert_eq!(now(), Some(1));
            let caught = std::panic::catch_unwind(|| with(&SLOT, 3, || panic!("inside")));
            assert!(caught.is_err());
            assert_eq!(now(), Some(1));
        });
        assert_eq!(now(), None);
    }
}
