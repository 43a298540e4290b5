use super::*;

/// Places `new` for `old` matched at `window` in a file that is just those lines plus
/// `before` and `after`.
fn place_in(
    before: Option<&str>,
    window: &[&str],
    after: Option<&str>,
    old: &[&str],
    new: &str,
) -> Result<String, Unplaceable> {
    let mut file: Vec<&str> = before.into_iter().collect();
    file.extend(window);
    file.extend(after);
    let region = Region {
        old,
        window,
        before,
        after,
        file: &file,
    };
    reindent(&region, new)
}

#[test]
fn a_line_inserted_before_a_closing_brace_stays_in_the_block() {
    let window = ["    if ok {", "        call();", "    }"];
    let old = ["if ok {", "call();", "}"];
    let placed = place_in(
        Some("fn main() {"),
        &window,
        Some("}"),
        &old,
        "if ok {\ncall();\nother();\n}",
    );
    assert_eq!(
        placed.unwrap(),
        "    if ok {\n        call();\n        other();\n    }"
    );
}

#[test]
fn a_line_inserted_after_an_opening_line_goes_into_its_block() {
    let window = ["    if ok {", "        call();", "    }"];
    let old = ["if ok {", "call();", "}"];
    let placed = place_in(None, &window, None, &old, "if ok {\nfirst();\ncall();\n}");
    assert_eq!(
        placed.unwrap(),
        "    if ok {\n        first();\n        call();\n    }"
    );
}

#[test]
fn a_flattened_new_block_is_refused() {
    let window = ["    if ok {", "        call();", "    }"];
    let old = ["if ok {", "call();", "}"];
    let placed = place_in(
        None,
        &window,
        None,
        &old,
        "if ok {\ncall();\nif again {\nmore();\n}\n}",
    );
    assert!(placed.is_err(), "{placed:?}");
}

#[test]
fn a_line_after_the_end_of_a_python_block_is_ambiguous() {
    let window = ["    if a:", "        y = 1"];
    let old = ["if a:", "y = 1"];
    let placed = place_in(
        Some("def f(a):"),
        &window,
        Some("    return 0"),
        &old,
        "if a:\ny = 1\nz = 2",
    );
    assert_eq!(placed, Err(Unplaceable { new_line: 2 }));
}

#[test]
fn a_kept_line_the_sender_indented_further_is_shifted_by_that_much() {
    // The sender wrapped the two lines in a new block, indenting them one level.
    let window = ["\ta()", "\tb()"];
    let old = ["a()", "b()"];
    let placed = place_in(
        Some("func f() {"),
        &window,
        Some("}"),
        &old,
        "if x {\n    a()\n    b()\n}",
    );
    assert_eq!(placed.unwrap(), "\tif x {\n\t\ta()\n\t\tb()\n\t}");
}

#[test]
fn kept_lines_keep_their_inner_spacing() {
    let window = ["        x  =  1", "        y = 2"];
    let old = ["x = 1", "y = 2"];
    let placed = place_in(Some("    if a:"), &window, None, &old, "x = 1\ny = 3");
    assert_eq!(placed.unwrap(), "        x  =  1\n        y = 3");
}

#[test]
fn replaced_lines_pair_by_likeness_not_position() {
    let window = ["    if a:", "        y = compute(1)", "    z = 0"];
    let old = ["if a:", "y = compute(1)", "z = 0"];
    // "y" changed and a line inserted before it: "w" must not take the depth of "if a:".
    let placed = place_in(
        None,
        &window,
        None,
        &old,
        "if a:\nw = 5\ny = compute(2)\nz = 0",
    );
    assert_eq!(
        placed.unwrap(),
        "    if a:\n        w = 5\n        y = compute(2)\n    z = 0"
    );
}
