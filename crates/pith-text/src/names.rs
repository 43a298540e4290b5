//! "Did you mean" suggestions for names that do not exist.

/// Below this similarity a candidate is not worth suggesting: at 0.5, `lexer` still
/// suggested `parser`; a "did you mean" should only name close names.
const MIN_SIMILARITY: f64 = 0.7;

/// Returns up to `max` candidates that look like `target`, best first.
///
/// Similarity is the case-insensitive normalised Damerau-Levenshtein similarity, raised to
/// 0.8 when one name contains the other (`main.rs` for `src/main.rs`). Candidates below 0.7
/// are dropped, so an unrelated list yields nothing. Ties keep the order of `candidates`.
#[must_use]
pub fn similar_names<'a>(target: &str, candidates: &[&'a str], max: usize) -> Vec<&'a str> {
    let target = target.to_lowercase();
    let mut scored: Vec<(f64, usize, &'a str)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(position, &candidate)| {
            let score = similarity(&target, &candidate.to_lowercase());
            (score >= MIN_SIMILARITY).then_some((score, position, candidate))
        })
        .collect();
    scored.sort_by(|left, right| right.0.total_cmp(&left.0).then(left.1.cmp(&right.1)));
    scored
        .into_iter()
        .take(max)
        .map(|(_, _, candidate)| candidate)
        .collect()
}

fn similarity(target: &str, candidate: &str) -> f64 {
    let edit = strsim::normalized_damerau_levenshtein(target, candidate);
    let contains = !target.is_empty()
        && !candidate.is_empty()
        && (target.contains(candidate) || candidate.contains(target));
    if contains { edit.max(0.8) } else { edit }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_best_first() {
        let candidates = ["main.rs", "lib.rs", "mian.rs", "README.md"];
        assert_eq!(
            similar_names("main.sr", &candidates, 5),
            vec!["main.rs", "mian.rs"]
        );
    }

    #[test]
    fn suggests_nothing_for_unrelated_names() {
        assert!(similar_names("config.toml", &["zebra.png", "x"], 5).is_empty());
        assert!(similar_names("lexer", &["parser", "main"], 5).is_empty());
    }

    #[test]
    fn ignores_case_and_respects_the_maximum() {
        let candidates = ["Readme.md", "README.md", "readme.txt"];
        assert_eq!(
            similar_names("readme.md", &candidates, 2),
            vec!["Readme.md", "README.md"]
        );
    }

    #[test]
    fn a_name_contained_in_the_target_is_suggested() {
        assert_eq!(
            similar_names("src/pith/main.rs", &["main.rs", "zzz"], 3),
            vec!["main.rs"]
        );
    }

    #[test]
    fn empty_target_or_candidates_suggest_nothing_reasonable() {
        assert!(similar_names("", &["abc"], 3).is_empty());
        assert!(similar_names("abc", &[], 3).is_empty());
        assert_eq!(similar_names("", &[""], 3), vec![""]);
    }
}
