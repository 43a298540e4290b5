//! `Data` frames framed by hand on both sides, so a write's bytes are not
//! copied into a message: the near side writes the frame head and then the
//! caller's bytes straight to the transport, and the far side reads the bytes
//! straight into the write they belong to. On the wire such a frame is
//! exactly a postcard-encoded [`super::ToServer::Data`] (the unit tests check
//! it), so either side may also use the ordinary encoder and decoder.

/// The position of [`super::ToServer::Data`] in its enum (postcard numbers
/// variants by position).
const DATA_VARIANT: u32 = 2;

/// The longest head of a `Data` body: the variant, the id and the length,
/// each a varint of at most 10 bytes (the variant takes 1).
pub(crate) const DATA_HEAD_MAX: usize = 21;

/// How many bytes of a write one `Data` frame carries at most.
pub(crate) const DATA_CHUNK: usize = 4 << 20;

/// The frame length and the postcard head of a `Data` frame carrying `len`
/// bytes of request `id`; the bytes themselves follow.
pub(crate) fn data_head(id: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let invalid = |error: String| std::io::Error::new(std::io::ErrorKind::InvalidData, error);
    let head = postcard::to_stdvec(&(DATA_VARIANT, id, len as u64))
        .map_err(|error| invalid(error.to_string()))?;
    let total = u32::try_from(head.len() + len)
        .ok()
        .filter(|&total| total as usize <= super::MAX_FRAME)
        .ok_or_else(|| invalid("frame too large".to_owned()))?;
    let mut frame = Vec::with_capacity(4 + head.len());
    frame.extend_from_slice(&total.to_be_bytes());
    frame.extend_from_slice(&head);
    Ok(frame)
}

/// When `body` starts a `Data` frame: its request id, how many bytes it
/// carries, and how many bytes of `body` its head took.
pub(crate) fn parse_data_head(body: &[u8]) -> Option<(u64, u64, usize)> {
    let (variant, rest) = postcard::take_from_bytes::<u32>(body).ok()?;
    if variant != DATA_VARIANT {
        return None;
    }
    let (id, rest) = postcard::take_from_bytes::<u64>(rest).ok()?;
    let (len, rest) = postcard::take_from_bytes::<u64>(rest).ok()?;
    Some((id, len, body.len() - rest.len()))
}

#[cfg(test)]
mod tests {
    use super::super::ToServer;
    use super::*;

    #[test]
    fn a_hand_made_data_frame_is_a_postcard_data_message_and_parses_back() {
        for (id, len) in [(1_u64, 0_usize), (300, 5), (u64::MAX, 70_000)] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut frame = data_head(id, len).unwrap();
            frame.extend_from_slice(&bytes);
            let total = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
            assert_eq!(total, frame.len() - 4);
            match postcard::from_bytes::<ToServer>(&frame[4..]).unwrap() {
                ToServer::Data {
                    id: got,
                    bytes: got_bytes,
                } => {
                    assert_eq!((got, got_bytes), (id, bytes.clone()));
                }
                other => panic!("decoded as {other:?}"),
            }
            let encoded = postcard::to_stdvec(&ToServer::Data { id, bytes }).unwrap();
            assert_eq!(encoded, frame[4..]);
            let head = &frame[4..4 + DATA_HEAD_MAX.min(frame.len() - 4)];
            let (got_id, got_len, used) = parse_data_head(head).unwrap();
            assert_eq!((got_id, got_len), (id, len as u64));
            assert_eq!(used + len, total);
        }
    }

    #[test]
    fn other_messages_are_not_taken_for_data() {
        let cancel = postcard::to_stdvec(&ToServer::Cancel { id: 7 }).unwrap();
        assert_eq!(parse_data_head(&cancel), None);
        assert_eq!(parse_data_head(&[]), None);
    }
}
