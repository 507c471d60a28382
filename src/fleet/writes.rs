//! A device's local writes: when the next one comes (a Poisson process at the fleet's
//! rate per device) and what it is (a new document, an edit of its own, an edit of a
//! shared one, drawn by the mix). Deterministic from the device's seed.

use std::time::Duration;

use rand::RngExt as _;
use rand_distr::{Distribution, Exp};

use crate::seed::Rng;
use crate::workload::fleet::WriteMix;

/// The longest gap drawn between two writes: a rate near 0 waits at most this long
/// before drawing again (and an exponential draw has no upper end).
const LONGEST_GAP: Duration = Duration::from_secs(3600);

/// One local write, as drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// A new document: the device's `k`th own.
    Create(u64),
    /// An edit of its `k`th own document.
    EditOwn(u64),
    /// An edit of the `k`th shared document.
    EditShared(u64),
}

/// What a device's writes are drawn from.
pub struct Writes {
    rng: Rng,
    gaps: Option<Exp<f64>>,
    mix: WriteMix,
    /// Own documents created so far; creates past `capacity` become edits of its own.
    created: u64,
    capacity: Option<u64>,
    shared: u64,
}

impl Writes {
    /// Writes at `per_second` of `mix`, at most `capacity` own documents, edits of
    /// `shared` documents, drawn with `rng`.
    pub fn new(
        rng: Rng,
        per_second: f64,
        mix: WriteMix,
        (capacity, shared): (Option<u64>, u64),
    ) -> Writes {
        let gaps = (per_second.is_finite() && per_second > 0.0)
            .then(|| Exp::new(per_second).ok())
            .flatten();
        Writes {
            rng,
            gaps,
            mix,
            created: 0,
            capacity,
            shared,
        }
    }

    /// The time until the next write; `None` when the device does not write.
    pub fn next_gap(&mut self) -> Option<Duration> {
        let gaps = self.gaps?;
        let seconds: f64 = gaps.sample(&mut self.rng);
        Some(Duration::try_from_secs_f64(seconds).map_or(LONGEST_GAP, |d| d.min(LONGEST_GAP)))
    }

    /// The next write. A share that cannot be honoured falls to the next kind that can:
    /// an edit of its own before it has any is a create, an edit of a shared document
    /// with none shared is an edit of its own, a create past its capacity an edit.
    pub fn draw(&mut self) -> Write {
        let total = self.mix.create + self.mix.edit_own + self.mix.edit_shared;
        let draw = self.rng.random_range(0..total.max(1));
        let wanted = if draw < self.mix.create {
            Kind::Create
        } else if draw < self.mix.create + self.mix.edit_own {
            Kind::EditOwn
        } else {
            Kind::EditShared
        };
        match wanted {
            Kind::EditShared if self.shared > 0 => {
                Write::EditShared(self.rng.random_range(0..self.shared))
            }
            Kind::Create if self.can_create() => self.create(),
            _ if self.created > 0 => Write::EditOwn(self.rng.random_range(0..self.created)),
            _ if self.can_create() => self.create(),
            // Nothing of its own to edit and no room for more: a shared one, if any.
            _ if self.shared > 0 => Write::EditShared(self.rng.random_range(0..self.shared)),
            _ => Write::Create(self.created),
        }
    }

    fn can_create(&self) -> bool {
        self.capacity.is_none_or(|most| self.created < most)
    }

    fn create(&mut self) -> Write {
        self.created += 1;
        Write::Create(self.created - 1)
    }

    /// Own documents created so far.
    pub fn created(&self) -> u64 {
        self.created
    }
}

enum Kind {
    Create,
    EditOwn,
    EditShared,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;

    fn writes(mix: WriteMix, capacity: Option<u64>, shared: u64) -> Writes {
        Writes::new(seed::rng(3), 2.0, mix, (capacity, shared))
    }

    fn mix(create: u32, edit_own: u32, edit_shared: u32) -> WriteMix {
        WriteMix {
            create,
            edit_own,
            edit_shared,
        }
    }

    #[test]
    fn the_mix_is_followed() {
        let mut w = writes(mix(20, 30, 50), None, 10);
        let mut counts = [0u32; 3];
        for _ in 0..10_000 {
            match w.draw() {
                Write::Create(k) => {
                    assert_eq!(k, w.created() - 1);
                    counts[0] += 1;
                }
                Write::EditOwn(k) => {
                    assert!(k < w.created());
                    counts[1] += 1;
                }
                Write::EditShared(k) => {
                    assert!(k < 10);
                    counts[2] += 1;
                }
            }
        }
        // The first edits of its own before any create become creates: a handful.
        assert!((1_800..2_300).contains(&counts[0]), "{counts:?}");
        assert!((2_700..3_200).contains(&counts[1]), "{counts:?}");
        assert!((4_700..5_300).contains(&counts[2]), "{counts:?}");
    }

    #[test]
    fn what_cannot_be_honoured_falls_to_what_can() {
        // No shared documents: edits of its own, and a create first.
        let mut w = writes(mix(0, 0, 100), None, 0);
        assert_eq!(w.draw(), Write::Create(0));
        assert_eq!(w.draw(), Write::EditOwn(0));
        // A capacity of 2: creates past it are edits.
        let mut w = writes(mix(100, 0, 0), Some(2), 0);
        let drawn: Vec<Write> = (0..4).map(|_| w.draw()).collect();
        assert_eq!(drawn[..2], [Write::Create(0), Write::Create(1)]);
        assert!(
            drawn[2..]
                .iter()
                .all(|d| matches!(d, Write::EditOwn(k) if *k < 2))
        );
        // A capacity of 0 with shared documents: shared edits.
        let mut w = writes(mix(100, 0, 0), Some(0), 4);
        assert!(matches!(w.draw(), Write::EditShared(_)));
    }

    #[test]
    fn gaps_follow_the_rate_and_are_bounded() {
        let mut w = writes(WriteMix::default(), None, 0);
        let total: f64 = (0..10_000)
            .map(|_| w.next_gap().unwrap().as_secs_f64())
            .sum();
        // 2 per second: a mean gap of 0.5 s.
        assert!((0.47..0.53).contains(&(total / 10_000.0)), "{total}");
        let mut idle = Writes::new(seed::rng(1), 0.0, WriteMix::default(), (None, 0));
        assert_eq!(idle.next_gap(), None);
        let mut slow = Writes::new(seed::rng(1), 1e-12, WriteMix::default(), (None, 0));
        assert!(slow.next_gap().unwrap() <= LONGEST_GAP);
    }

    #[test]
    fn the_same_seed_draws_the_same_writes() {
        let draw = || {
            let mut w = writes(mix(40, 40, 20), Some(5), 3);
            (0..50)
                .map(|_| (w.draw(), w.next_gap()))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(), draw());
    }
}
