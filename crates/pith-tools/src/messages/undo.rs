//! `undo` (`tools/undo.rs`, `journal/undo.rs`).
