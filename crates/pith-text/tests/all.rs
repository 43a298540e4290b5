//! Integration tests of pith-text: properties of the whole engine and the real `patch`.

#[cfg(test)]
mod support;

#[cfg(test)]
#[path = "all/patch_program.rs"]
mod patch_program;
#[cfg(test)]
#[path = "all/properties.rs"]
mod properties;
