//! SHA-256 of a previous content with checkpoints, so the new content of an edit
//! is hashed only from its first changed byte: the bytes before it are the same,
//! and so is the hash state after them. A change in the middle of a 20 MiB file
//! hashes 10 MiB of new content, not 20.

use sha2::Digest;

/// Bytes between checkpoints.
const SPACING: usize = 1 << 20;
/// Bytes compared at a time when looking for the first change.
const COMPARED: usize = 64 * 1024;

/// The SHA-256 of a content and the hash state every 1 MiB into it.
#[derive(Clone)]
pub(crate) struct CheckpointedHash {
    hash: String,
    /// `(offset, state after the bytes before offset)`, ascending, from offset 0.
    marks: Vec<(usize, sha2::Sha256)>,
}

impl CheckpointedHash {
    /// Hashes `bytes`, keeping a checkpoint every [`SPACING`] bytes.
    pub(crate) fn of(bytes: &[u8]) -> CheckpointedHash {
        let mut sha = sha2::Sha256::new();
        let mut marks = Vec::with_capacity(bytes.len() / SPACING + 1);
        for (index, chunk) in bytes.chunks(SPACING).enumerate() {
            marks.push((index * SPACING, sha.clone()));
            sha.update(chunk);
        }
        if marks.is_empty() {
            marks.push((0, sha.clone()));
        }
        CheckpointedHash {
            hash: crate::textfile::hex(&sha.finalize()),
            marks,
        }
    }

    /// The content's SHA-256 (lowercase hex).
    pub(crate) fn hash(&self) -> &str {
        &self.hash
    }

    /// The SHA-256 of `new`, an edit of `old` (the content this hashed): from the
    /// last checkpoint before the first byte where they differ.
    pub(crate) fn hash_of_edit(&self, old: &[u8], new: &[u8]) -> String {
        let same = common_prefix(old, new);
        let (at, state) = self
            .marks
            .iter()
            .rev()
            .find(|(at, _)| *at <= same)
            .cloned()
            .unwrap_or_else(|| (0, sha2::Sha256::new()));
        let mut sha = state;
        sha.update(new.get(at..).unwrap_or_default());
        crate::textfile::hex(&sha.finalize())
    }
}

/// The SHA-256 of `old` and of the concatenation of `parts`, an edit of `old`
/// that leaves its first `same` bytes as they were: those bytes are hashed
/// once, then the rest of each content on its own thread from a copy of that
/// state (a change in the middle of 20 MiB costs the time of 20 MiB hashed, not 30).
pub(crate) fn hashes_of_edit(old: &[u8], same: usize, parts: &[&[u8]]) -> (String, String) {
    let shared = same.min(old.len());
    let mut sha = sha2::Sha256::new();
    sha.update(old.get(..shared).unwrap_or_default());
    let new_state = sha.clone();
    let new_hash = move || {
        let mut sha = new_state;
        let mut offset = 0;
        for part in parts {
            let end = offset + part.len();
            if end > shared {
                sha.update(
                    part.get(shared.saturating_sub(offset)..)
                        .unwrap_or_default(),
                );
            }
            offset = end;
        }
        crate::textfile::hex(&sha.finalize())
    };
    let (new_hash, old_hash) = crate::beside::beside(new_hash, || {
        sha.update(old.get(shared..).unwrap_or_default());
        crate::textfile::hex(&sha.finalize())
    });
    (old_hash, new_hash)
}

/// How many leading bytes `a` and `b` share (compared 64 KiB at a time).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut same = 0;
    for (x, y) in a.chunks(COMPARED).zip(b.chunks(COMPARED)) {
        if x == y {
            same += x.len();
            continue;
        }
        return same + x.iter().zip(y).take_while(|(x, y)| x == y).count();
    }
    same
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_of_an_edit_is_the_hash_of_the_new_bytes_wherever_the_change_is() {
        let old: Vec<u8> = (0..(3 << 20) + 12_345).map(|i| (i % 251) as u8).collect();
        let hashed = CheckpointedHash::of(&old);
        assert_eq!(hashed.hash(), pith_env::remote::sha256_hex(&old));
        let edits = [
            (0, 1, &b"X"[..]),
            (SPACING - 1, SPACING + 1, b"cut"),
            (2 * SPACING, 2 * SPACING, b"inserted at a checkpoint"),
            (old.len() - 5, old.len(), b""),
            (old.len(), old.len(), b"appended"),
            (1_500_000, 2_600_000, b""),
        ];
        for (start, end, with) in edits {
            let new = [&old[..start], with, &old[end..]].concat();
            assert_eq!(
                hashed.hash_of_edit(&old, &new),
                pith_env::remote::sha256_hex(&new),
                "{start}..{end}"
            );
        }
        let empty = CheckpointedHash::of(b"");
        assert_eq!(
            empty.hash_of_edit(b"", b"a"),
            pith_env::remote::sha256_hex(b"a")
        );
        for (start, end, with) in [(5, 9, &b"new"[..]), (2 * SPACING + 3, old.len(), b"")] {
            let parts: [&[u8]; 3] = [&old[..start], with, &old[end..]];
            assert_eq!(
                hashes_of_edit(&old, start, &parts),
                (
                    pith_env::remote::sha256_hex(&old),
                    pith_env::remote::sha256_hex(&parts.concat())
                ),
            );
        }
        assert_eq!(common_prefix(b"abc", b"abd"), 2);
        assert_eq!(common_prefix(b"ab", b"abc"), 2);
    }
}
