//! Group names as read, one per grouped fragment, and the groups they make.
//!
//! Names are gathered as they come and grouped once, by sorting their hashes: a hash table
//! looked up per fragment would jump all over memory, a sort walks it in order.

/// Group names of the grouped fragments, in the order they were marked.
#[derive(Debug, Default)]
pub struct GroupMarks {
    /// Per mark, its name's hash, its fragment and the mark itself, high bits to low: sorted,
    /// marks that share a hash sit together, by ascending fragment.
    keys: Vec<u128>,
    names: Vec<u8>,
    /// Where each name ends in `names`.
    ends: Vec<usize>,
}

/// Fragments that share a group name: group `g` is `members[starts[g]..starts[g + 1]]`,
/// ascending.
#[derive(Debug, Default)]
pub struct Groups {
    pub members: Vec<u32>,
    pub starts: Vec<u32>,
}

impl Groups {
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn members(&self, group: usize) -> &[u32] {
        &self.members[self.starts[group] as usize..self.starts[group + 1] as usize]
    }

    fn add(&mut self, keys: &[u128]) {
        self.members
            .extend(keys.iter().map(|&key| fragment_of(key)));
        self.starts.push(self.members.len() as u32);
    }
}

fn hash_of(key: u128) -> u64 {
    (key >> 64) as u64
}

fn fragment_of(key: u128) -> u32 {
    (key >> 32) as u32
}

impl GroupMarks {
    /// Marks `fragment` as a member of the group named `name`; `hash` must be equal for
    /// equal names. Fragments are marked in ascending order.
    pub fn push(&mut self, fragment: u32, name: &[u8], hash: u64) {
        let mark = self.keys.len() as u128;
        self.keys
            .push(u128::from(hash) << 64 | u128::from(fragment) << 32 | mark);
        self.names.extend_from_slice(name);
        self.ends.push(self.names.len());
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn name(&self, key: u128) -> &[u8] {
        let mark = key as u32 as usize;
        let start = if mark == 0 { 0 } else { self.ends[mark - 1] };
        &self.names[start..self.ends[mark]]
    }

    /// The groups, in no particular order.
    pub fn into_groups(mut self) -> Groups {
        let mut keys = std::mem::take(&mut self.keys);
        keys.sort_unstable();
        let mut groups = Groups {
            members: Vec::with_capacity(keys.len()),
            starts: vec![0],
        };
        for same_hash in keys.chunk_by_mut(|&a, &b| hash_of(a) == hash_of(b)) {
            let first = self.name(same_hash[0]);
            if same_hash[1..].iter().all(|&key| self.name(key) == first) {
                groups.add(same_hash);
                continue;
            }
            // Names that share a hash, rare: apart by name, each still ascending.
            same_hash.sort_unstable_by(|&a, &b| self.name(a).cmp(self.name(b)).then(a.cmp(&b)));
            for same_name in same_hash.chunk_by(|&a, &b| self.name(a) == self.name(b)) {
                groups.add(same_name);
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grouped(marks: &[(u32, &str, u64)]) -> Vec<Vec<u32>> {
        let mut names = GroupMarks::default();
        for &(fragment, name, hash) in marks {
            names.push(fragment, name.as_bytes(), hash);
        }
        assert_eq!(names.len(), marks.len());
        let groups = names.into_groups();
        let mut all: Vec<Vec<u32>> = (0..groups.len())
            .map(|g| groups.members(g).to_vec())
            .collect();
        all.sort();
        all
    }

    #[test]
    fn equal_names_group_together_even_when_hashes_collide() {
        let marks = [
            (0, "tool", 7),
            (1, "other", 7),
            (2, "third", 9),
            (3, "tool", 7),
            (5, "other", 7),
            (6, "fourth", 7),
            (8, "other", 7),
        ];
        assert_eq!(
            grouped(&marks),
            vec![vec![0, 3], vec![1, 5, 8], vec![2], vec![6]]
        );
    }

    #[test]
    fn names_are_compared_whole() {
        let long = "a group name longer than sixteen bytes";
        let marks = [
            (0, long, 1),
            (1, "a group name longer than sixteen BYTES", 1),
            (2, "a group name longer than sixteen bytes, too", 1),
            (3, long, 1),
            (4, "short", 1),
            (5, "shorT", 1),
            (6, "short", 1),
        ];
        assert_eq!(
            grouped(&marks),
            vec![vec![0, 3], vec![1], vec![2], vec![4, 6], vec![5]]
        );
    }

    #[test]
    fn no_marks_make_no_groups() {
        let names = GroupMarks::default();
        assert!(names.is_empty());
        let groups = names.into_groups();
        assert!(groups.is_empty() && groups.members.is_empty());
    }
}
