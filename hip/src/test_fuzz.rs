//! For the tests that run the math libraries' shape checks over hostile values (issue 43): a small
//! deterministic generator (splitmix64) and the values a fuzzer would try first, so every run checks the
//! same cases and a failure names one that can be run again.

/// splitmix64: a fixed seed gives a fixed sequence.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator starting from `seed`.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value below `n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A size: half the time one at an edge (0, 1, around `i32::MAX`, `u32::MAX`, `2^32`, `usize::MAX / 2`,
    /// `usize::MAX`), else a small one or any 64-bit value.
    pub(crate) fn size(&mut self) -> usize {
        const EDGES: [usize; 16] = [
            0,
            1,
            2,
            3,
            i32::MAX as usize - 1,
            i32::MAX as usize,
            i32::MAX as usize + 1,
            1 << 31,
            u32::MAX as usize,
            1 << 32,
            (1 << 32) + 1,
            usize::MAX / 2,
            usize::MAX / 2 + 1,
            usize::MAX - 1,
            usize::MAX,
            1 << 62,
        ];
        match self.below(4) {
            0 | 1 => EDGES[self.below(EDGES.len())],
            2 => self.below(17),
            _ => self.next() as usize,
        }
    }

    /// A C `int` (an increment): an edge (0, +-1, `i32::MIN`, `i32::MAX`, ...) or any value.
    pub(crate) fn int(&mut self) -> i32 {
        const EDGES: [i32; 10] = [
            0,
            1,
            -1,
            2,
            -2,
            i32::MAX,
            i32::MAX - 1,
            i32::MIN,
            i32::MIN + 1,
            1 << 30,
        ];
        match self.below(3) {
            0 | 1 => EDGES[self.below(EDGES.len())],
            _ => self.next() as i32,
        }
    }
}

#[test]
fn the_generator_is_deterministic_and_reaches_the_edges() {
    let (mut a, mut b) = (Rng::new(7), Rng::new(7));
    let xs: Vec<u64> = (0..100).map(|_| a.next()).collect();
    assert_eq!(xs, (0..100).map(|_| b.next()).collect::<Vec<_>>());
    assert_ne!(xs[0], Rng::new(8).next());
    let sizes: Vec<usize> = (0..10_000).map(|_| a.size()).collect();
    for edge in [0, usize::MAX, i32::MAX as usize, 1 << 32] {
        assert!(sizes.contains(&edge), "{edge}");
    }
    let ints: Vec<i32> = (0..10_000).map(|_| a.int()).collect();
    for edge in [0, -1, i32::MIN, i32::MAX] {
        assert!(ints.contains(&edge), "{edge}");
    }
}
