//! A turn's call: the fragments the previous output sent, found among this call's, and one
//! call to the core that keeps the longest run of them the value allows.

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::compress::{compress_columns, fragment_reader, read_columns, read_fragments};
use super::read::{exact_str, Read};
use super::results::{decision_columns, kept_fragments, HeadroomRoom, Rooms};
use super::text::IdText;
use crate::core::{Columns, Compression, Request, Reuse, RowsById, Share};

/// `(kept_fragments, original_tokens, compressed_tokens, value_kept, value_bound,
/// relevance_kept, reused_tokens, decisions or None, exact)`.
pub type Turned<'py> = (
    Bound<'py, PyTuple>,
    u128,
    u128,
    u128,
    u128,
    f64,
    u128,
    Option<Bound<'py, PyTuple>>,
    bool,
);

/// `fragments` compressed to the one budget of `request`, reusing what `previous` sent first.
pub fn compress_turn<'py>(
    fragments: &Bound<'py, PyTuple>,
    skeleton_budget: &Bound<'py, PyAny>,
    previous: &Bound<'py, PyTuple>,
    [max_value_loss, headroom]: [f64; 2],
    request: Request<'_>,
) -> PyResult<Turned<'py>> {
    let py = fragments.py();
    let max_value_loss = share(max_value_loss, "max_value_loss")?;
    let headroom = share(headroom, "headroom")?;
    let past = headroom_past_u128(skeleton_budget, request.budgets[0], headroom)?;
    let reader = fragment_reader(py)?;
    let turn = || -> Read<'py, Turned<'py>> {
        let read = read_fragments(&reader, fragments);
        let columns = read_columns(fragments.len(), read, request)?;
        let reuse = Reuse {
            matched: matched_rows(fragments, previous, &columns)?,
            max_value_loss,
            headroom,
            headroom_room: past.as_ref().map(|room| room.given),
        };
        let request = Request {
            reuse: Some(&reuse),
            ..request
        };
        let build = |compression: Compression| {
            let [selection] = &compression.selections[..] else {
                return Err(PyValueError::new_err("one selection per budget"));
            };
            let decisions = if request.explain {
                let budget = request.budgets[0];
                let rooms = Rooms {
                    budget,
                    skeleton_budget,
                    headroom: past.as_ref(),
                };
                Some(decision_columns(py, &compression, rooms)?)
            } else {
                None
            };
            Ok((
                kept_fragments(fragments, &selection.kept)?,
                compression.original_tokens,
                selection.compressed_tokens,
                selection.value_kept,
                selection.value_bound,
                compression.relevance_kept[0],
                selection.reused_tokens,
                decisions,
                selection.exact,
            ))
        };
        compress_columns(&reader, columns, request, build)
    };
    turn().map_err(|failure| failure.into_pyerr(py, reader.ctx))
}

/// Past all the tokens of any call (each under 2**63, at most 2**32 of them): a room of
/// more is as good as this much.
const AMPLE_ROOM: u128 = u128::MAX / 2;

/// The room `headroom` leaves of a budget read as `u128::MAX` (one past it, or that very
/// number), from the real budget in Python's ints; `None` otherwise or without headroom.
pub fn headroom_past_u128<'py>(
    skeleton_budget: &Bound<'py, PyAny>,
    budget: u128,
    headroom: Share,
) -> PyResult<Option<HeadroomRoom<'py>>> {
    if budget != u128::MAX || headroom.is_zero() {
        return Ok(None);
    }
    let (numerator, shift) = headroom.ratio();
    let left_free = skeleton_budget.mul(numerator)?.rshift(shift)?;
    let real = skeleton_budget.sub(left_free)?;
    // Given more than `AMPLE_ROOM`, the core packs as it would to the real room, and every
    // budget_left it counts down from that room stays below those from the whole budget.
    let given = match real.extract::<u128>() {
        Ok(room) if room <= AMPLE_ROOM => room,
        _ => AMPLE_ROOM,
    };
    Ok(Some(HeadroomRoom { given, real }))
}

/// What the Python layer checked, checked again so that the core is safe on its own.
pub fn share(value: f64, name: &str) -> PyResult<Share> {
    Share::of(value)
        .ok_or_else(|| PyValueError::new_err(format!("{name} must be in [0, 1), got {value}")))
}

/// This call's rows of the fragments `previous` sent, in its order, up to the first it sent
/// that this call does not have: the same id, and the very object or an equal token count
/// and content (compared as Python compares them).
fn matched_rows<'py>(
    fragments: &Bound<'py, PyTuple>,
    previous: &Bound<'py, PyTuple>,
    columns: &Columns,
) -> PyResult<Vec<u32>> {
    let py = fragments.py();
    let mut matched = Vec::new();
    if previous.is_empty() {
        return Ok(matched);
    }
    let rows = RowsById::new(columns);
    for sent in previous.iter() {
        let Some(id) = exact_str(&sent.getattr(intern!(py, "fragment_id"))?)? else {
            break;
        };
        let hash = id.hash()? as u64;
        let Some(row) = rows.row(columns, IdText::new(id)?.as_bytes(), hash) else {
            break;
        };
        let current = fragments.get_item(row as usize)?;
        if !current.is(&sent) && !same_fragment(&sent, &current)? {
            break;
        }
        matched.push(row);
    }
    Ok(matched)
}

fn same_fragment(sent: &Bound<'_, PyAny>, current: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = sent.py();
    for field in [intern!(py, "token_count"), intern!(py, "content")] {
        if !sent.getattr(field)?.eq(current.getattr(field)?)? {
            return Ok(false);
        }
    }
    Ok(true)
}
