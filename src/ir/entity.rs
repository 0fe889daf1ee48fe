//! Typed ids and the dense tables they index.
//!
//! `entity!` makes a 4-byte id type holding `index + 1` in a `NonZeroU32`, so `Option<Id>` stays
//! 4 bytes, and whose `Debug`/`Display` print a short prefix (`v7`, `bb3`) so panics read like IR
//! dumps. `IdVec<K, V>` is a `Vec<V>` that only `K` indexes; `push` returns the new `K`.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// A typed index into an `IdVec`.
pub trait EntityRef: Copy + Eq {
    fn new(index: usize) -> Self;
    fn index(self) -> usize;
}

/// Declares a typed id: `entity!(/// doc
/// Value, "v");`.
#[macro_export]
macro_rules! entity {
    ($(#[$attr:meta])* $name:ident, $prefix:expr) => {
        $(#[$attr])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(::std::num::NonZeroU32);

        impl $name {
            /// The id with this index.
            #[inline]
            pub fn new(index: usize) -> Self {
                assert!(index < u32::MAX as usize, "too many {}", stringify!($name));
                $name(::std::num::NonZeroU32::new(index as u32 + 1).unwrap())
            }
            /// The dense index of this id.
            #[inline]
            pub fn index(self) -> usize {
                self.0.get() as usize - 1
            }
        }

        impl $crate::ir::entity::EntityRef for $name {
            #[inline]
            fn new(index: usize) -> Self {
                $name::new(index)
            }
            #[inline]
            fn index(self) -> usize {
                $name::index(self)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}{}", $prefix, self.index())
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}{}", $prefix, self.index())
            }
        }
    };
}

/// A `Vec<V>` indexed by the typed id `K`.
#[derive(Clone, PartialEq, Eq)]
pub struct IdVec<K, V> {
    raw: Vec<V>,
    _key: PhantomData<fn(K) -> K>,
}

impl<K: EntityRef, V> Default for IdVec<K, V> {
    fn default() -> Self {
        IdVec {
            raw: Vec::new(),
            _key: PhantomData,
        }
    }
}

impl<K: EntityRef, V: fmt::Debug> fmt::Debug for IdVec<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(k, v)| (k.index(), v)))
            .finish()
    }
}

impl<K: EntityRef, V> IdVec<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        IdVec {
            raw: Vec::with_capacity(n),
            _key: PhantomData,
        }
    }

    /// The table whose entry `K::new(i)` is `raw[i]`.
    pub fn from_vec(raw: Vec<V>) -> Self {
        IdVec {
            raw,
            _key: PhantomData,
        }
    }

    /// Gives back the capacity beyond the length.
    pub fn shrink_to_fit(&mut self) {
        self.raw.shrink_to_fit();
    }

    /// Makes room for at least `n` more entries.
    pub fn reserve(&mut self, n: usize) {
        self.raw.reserve(n);
    }

    /// A table of `n` copies of `v`, for dense per-entity facts.
    pub fn filled(n: usize, v: V) -> Self
    where
        V: Clone,
    {
        IdVec {
            raw: vec![v; n],
            _key: PhantomData,
        }
    }

    /// Appends `v` and returns its id.
    #[inline]
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.raw.len());
        self.raw.push(v);
        k
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The id the next `push` returns.
    #[inline]
    pub fn next_key(&self) -> K {
        K::new(self.raw.len())
    }

    #[inline]
    pub fn get(&self, k: K) -> Option<&V> {
        self.raw.get(k.index())
    }

    /// Grows the table with copies of `v` until `k` is a valid index.
    pub fn ensure(&mut self, k: K, v: V)
    where
        V: Clone,
    {
        if k.index() >= self.raw.len() {
            self.raw.resize(k.index() + 1, v);
        }
    }

    pub fn resize(&mut self, n: usize, v: V)
    where
        V: Clone,
    {
        self.raw.resize(n, v);
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator + Clone {
        (0..self.raw.len()).map(K::new)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + ExactSizeIterator {
        self.raw.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (K, &mut V)> + ExactSizeIterator {
        self.raw.iter_mut().enumerate().map(|(i, v)| (K::new(i), v))
    }

    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.raw.iter()
    }

    pub fn as_slice(&self) -> &[V] {
        &self.raw
    }

    pub fn as_mut_slice(&mut self) -> &mut [V] {
        &mut self.raw
    }

    pub fn clear(&mut self) {
        self.raw.clear();
    }

    pub fn truncate(&mut self, n: usize) {
        self.raw.truncate(n);
    }
}

impl<K: EntityRef, V> Index<K> for IdVec<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        &self.raw[k.index()]
    }
}

impl<K: EntityRef, V> IndexMut<K> for IdVec<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.raw[k.index()]
    }
}

impl<K: EntityRef, V> FromIterator<V> for IdVec<K, V> {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        IdVec {
            raw: iter.into_iter().collect(),
            _key: PhantomData,
        }
    }
}

/// A dense set of ids, one bit each.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct IdSet<K> {
    words: Vec<u64>,
    _key: PhantomData<fn(K) -> K>,
}

impl<K: EntityRef> IdSet<K> {
    pub fn with_capacity(n: usize) -> Self {
        IdSet {
            words: vec![0; n.div_ceil(64)],
            _key: PhantomData,
        }
    }

    /// Inserts `k`; returns true if it was not there.
    #[inline]
    pub fn insert(&mut self, k: K) -> bool {
        let i = k.index();
        if i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        let bit = 1u64 << (i % 64);
        let was = self.words[i / 64] & bit != 0;
        self.words[i / 64] |= bit;
        !was
    }

    #[inline]
    pub fn remove(&mut self, k: K) -> bool {
        let i = k.index();
        if i / 64 >= self.words.len() {
            return false;
        }
        let bit = 1u64 << (i % 64);
        let was = self.words[i / 64] & bit != 0;
        self.words[i / 64] &= !bit;
        was
    }

    #[inline]
    pub fn contains(&self, k: K) -> bool {
        let i = k.index();
        i / 64 < self.words.len() && self.words[i / 64] & (1u64 << (i % 64)) != 0
    }

    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// Makes the set hold every id below `n` (and nothing else).
    pub fn fill(&mut self, n: usize) {
        self.words.clear();
        self.words.resize(n / 64, !0);
        if !n.is_multiple_of(64) {
            self.words.push((1 << (n % 64)) - 1);
        }
    }

    /// Removes and returns the least member not below `from`: a sweep in id order that finds
    /// each member without reading the absent ones one by one.
    pub fn take_from(&mut self, from: K) -> Option<K> {
        let from = from.index();
        let mut w = from / 64;
        let mut bits = *self.words.get(w)? & (!0u64 << (from % 64));
        while bits == 0 {
            w += 1;
            bits = *self.words.get(w)?;
        }
        let b = bits.trailing_zeros() as usize;
        self.words[w] &= !(1 << b);
        Some(K::new(w * 64 + b))
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    pub fn iter(&self) -> impl Iterator<Item = K> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(K::new(wi * 64 + b))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    crate::entity!(Thing, "t");

    #[test]
    fn ids_are_small_and_print_like_ir() {
        assert_eq!(std::mem::size_of::<Option<Thing>>(), 4);
        assert_eq!(format!("{:?}", Thing::new(7)), "t7");
        assert_eq!(Thing::new(7).index(), 7);
    }

    #[test]
    fn idvec_push_returns_keys_in_order() {
        let mut v: IdVec<Thing, &str> = IdVec::new();
        let a = v.push("a");
        let b = v.push("b");
        assert_eq!((a.index(), b.index()), (0, 1));
        assert_eq!(v[b], "b");
        assert_eq!(v.keys().collect::<Vec<_>>(), vec![a, b]);
        v.ensure(Thing::new(4), "z");
        assert_eq!(v.len(), 5);
        assert_eq!(v[Thing::new(3)], "z");
    }

    #[test]
    fn idset_insert_remove_iter() {
        let mut s: IdSet<Thing> = IdSet::with_capacity(10);
        assert!(s.insert(Thing::new(3)));
        assert!(!s.insert(Thing::new(3)));
        assert!(s.insert(Thing::new(130)));
        assert_eq!(
            s.iter().map(|t| t.index()).collect::<Vec<_>>(),
            vec![3, 130]
        );
        assert!(s.remove(Thing::new(3)));
        assert!(!s.contains(Thing::new(3)));
        assert!(s.contains(Thing::new(130)));
    }

    #[test]
    fn fill_then_take_in_order() {
        let mut s: IdSet<Thing> = IdSet::with_capacity(0);
        s.fill(130);
        assert!(s.contains(Thing::new(129)) && !s.contains(Thing::new(130)));
        s.remove(Thing::new(64));
        assert_eq!(s.take_from(Thing::new(63)), Some(Thing::new(63)));
        assert_eq!(s.take_from(Thing::new(63)), Some(Thing::new(65)));
        assert_eq!(s.take_from(Thing::new(129)), Some(Thing::new(129)));
        assert_eq!(s.take_from(Thing::new(129)), None);
        assert_eq!(s.take_from(Thing::new(500)), None);
        assert_eq!(s.iter().count(), 126);
    }
}
