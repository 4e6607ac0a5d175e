//! A set of address ranges: the host mappings the mock made for the caller.

use std::collections::BTreeMap;

/// Disjoint half-open ranges `[start, end)`.
#[derive(Debug, Default, Clone)]
pub(crate) struct RangeSet {
    ranges: BTreeMap<usize, usize>,
}

impl RangeSet {
    /// Removes `[start, end)` from the set, splitting ranges it cuts.
    pub fn remove(&mut self, start: usize, end: usize) {
        let hit: Vec<(usize, usize)> = self
            .ranges
            .range(..end)
            .filter(|&(_, &e)| e > start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in hit {
            self.ranges.remove(&s);
            if s < start {
                self.ranges.insert(s, start);
            }
            if e > end {
                self.ranges.insert(end, e);
            }
        }
    }

    /// Adds `[start, end)`, replacing what it overlaps.
    pub fn insert(&mut self, start: usize, end: usize) {
        if start < end {
            self.remove(start, end);
            self.ranges.insert(start, end);
        }
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether `[start, end)` lies inside one range.
    pub fn contains(&self, start: usize, end: usize) -> bool {
        self.ranges.range(..=start).next_back().is_some_and(|(_, &e)| end <= e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_split() {
        let mut r = RangeSet::default();
        r.insert(0x1000, 0x5000);
        r.insert(0x2000, 0x3000); // replaces the middle: still covered
        assert_eq!(r.len(), 3); // as the kernel splits a mapping mapped over in the middle
        r.remove(0x2000, 0x3000);
        assert_eq!(r.len(), 2);
        assert!(r.contains(0x1000, 0x2000));
        assert!(!r.contains(0x1800, 0x2800));
        r.remove(0, 0x10000);
        assert_eq!(r.len(), 0);
    }
}
