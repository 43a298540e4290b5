//! Integration tests of pith-text: edit fixtures, properties of the whole engine and the
//! real `patch`.

#[cfg(test)]
mod support;

#[cfg(test)]
#[path = "all/fixtures.rs"]
mod fixtures;
#[cfg(test)]
#[path = "all/indentation.rs"]
mod indentation;
#[cfg(test)]
#[path = "all/patch_program.rs"]
mod patch_program;
#[cfg(test)]
#[path = "all/properties.rs"]
mod properties;
