use std::io::Cursor;

use super::*;
use crate::core::records::compression::kept_spans;
use crate::core::records::read::read_records;
use crate::core::test_support::unasked;
use crate::core::{
    compress_record_file, FileCompression, Interrupt, Policy, RecordsRefusal, Request, Strategy,
    Tuning, Uninterrupted,
};

fn tuning(chunk_bytes: usize) -> StreamTuning {
    StreamTuning {
        chunk_bytes,
        largest_record: 4096,
        reserve_records: 2,
    }
}

fn streamed(input: &[u8], chunk_bytes: usize) -> Streamed {
    let mut columns = Columns::new(4, &Tuning::default()).unwrap();
    stream_records(
        &mut Cursor::new(input),
        None,
        &mut columns,
        &tuning(chunk_bytes),
        &mut unasked(),
    )
    .unwrap()
}

fn whole(input: &[u8]) -> Records {
    let mut columns = Columns::new(4, &Tuning::default()).unwrap();
    read_records(input, None, &mut columns, &mut unasked()).unwrap()
}

fn record(index: usize) -> String {
    format!(
        r#"{{"fragment_id": "src/m_{index}.py#chunk-\u00e9{index}", "token_count": {},
 "relevance_score": 0.{index}, "extra": [{index}, {{"deep": "日本"}}]}}"#,
        index * 7 % 50
    )
}

fn inputs() -> Vec<String> {
    let records: Vec<String> = (0..23).map(record).collect();
    let flat: Vec<String> = (0..23)
        .map(|index| {
            format!(r#"{{"fragment_id":"f{index}","token_count":{index},"relevance_score":1}}"#)
        })
        .collect();
    vec![
        format!("[{}]", records.join(",")),
        format!("\u{feff}  [\n{}\n]\n\n", flat.join(" ,\n ")),
        flat.join("\n"),
        format!("\u{feff}{}\r\n\r\n", flat.join("\r\n\n")),
        "[]".into(),
        " [ ] ".into(),
        records
            .iter()
            .map(|record| record.replace('\n', " "))
            .collect::<Vec<_>>()
            .join("\n"),
    ]
}

#[test]
fn streaming_reads_what_the_whole_input_reader_reads_at_every_chunk_size() {
    for input in inputs() {
        let expected = whole(input.as_bytes());
        for chunk in [1, 2, 3, 5, 17, 64, 1000, 1 << 20] {
            assert_eq!(
                streamed(input.as_bytes(), chunk),
                Streamed::Read(expected.clone()),
                "chunk {chunk}: {input}"
            );
        }
    }
}

#[test]
fn anything_but_the_common_case_is_left_to_the_whole_input_reader() {
    let good = r#"{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5}"#;
    let cases = [
        String::new(),
        "  \n ".into(),
        format!(r#"{{"fragments": [{good}]}}"#),
        format!(
            "{{{}\"fragments\" \n: [{good}], {}}}",
            " ".repeat(300),
            &good[1..good.len() - 1]
        ),
        format!("[{good}, {good}"),
        format!("[{good}] x"),
        format!("[{good},]"),
        format!("{good}\n{{oops}}\n"),
        format!("{good} {good}"),
        format!("[{good}, 1]"),
        r#"[{"fragment_id": "a", "token_count": -1, "relevance_score": 0.5}]"#.into(),
        format!("[{good}, \"\u{ff}\"]"),
        format!("{good}\n{}", "x".repeat(5000)),
    ];
    for input in &cases {
        for chunk in [1, 7, 1 << 20] {
            assert_eq!(
                streamed(input.as_bytes(), chunk),
                Streamed::Unsure,
                "{input}"
            );
        }
    }
    let mut invalid = good.as_bytes().to_vec();
    invalid.extend_from_slice(b"\n\xff\n");
    assert_eq!(streamed(&invalid, 3), Streamed::Unsure);
}

#[test]
fn kept_records_are_read_back_from_the_file() {
    for input in inputs() {
        let records = whole(input.as_bytes());
        let count = records.starts.len() as u32;
        let kept: Vec<u32> = (0..count).rev().filter(|index| index % 3 != 1).collect();
        let expected = kept_spans(input.as_bytes(), &records.starts, &kept);
        for chunk in [1, 4, 33, 1 << 20] {
            let ReadBack::Read(bytes, spans) = read_kept(
                &mut Cursor::new(input.as_bytes()),
                &records.starts,
                &kept,
                &tuning(chunk),
                &mut unasked(),
            )
            .unwrap() else {
                panic!("{input}")
            };
            let got: Vec<&[u8]> = spans.iter().map(|s| &bytes[s.start..s.end]).collect();
            let want: Vec<&[u8]> = expected
                .iter()
                .map(|s| &input.as_bytes()[s.start..s.end])
                .collect();
            assert_eq!(got, want, "chunk {chunk}");
        }
    }
}

#[test]
fn a_file_that_changed_is_not_read_back() {
    let input = r#"[{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5}]"#;
    let records = whole(input.as_bytes());
    let changed = &input[..input.len() - 5];
    let back = read_kept(
        &mut Cursor::new(changed),
        &records.starts,
        &[0],
        &tuning(8),
        &mut unasked(),
    )
    .unwrap();
    assert_eq!(back, ReadBack::Gone);
}

#[test]
fn long_records_are_read_back_whole() {
    let long = "é".repeat(20_000);
    let input = format!(
        "[{{\"fragment_id\": \"a\", \"token_count\": 1, \"relevance_score\": 0.5, \"x\": \"{long}\"}}, \
         {{\"fragment_id\": \"b\", \"token_count\": 1, \"relevance_score\": 0.5}}]"
    );
    let records = whole(input.as_bytes());
    let tuning = StreamTuning {
        chunk_bytes: 1000,
        largest_record: 1 << 20,
        reserve_records: 1,
    };
    let back = read_kept(
        &mut Cursor::new(&input),
        &records.starts,
        &[1, 0],
        &tuning,
        &mut unasked(),
    );
    let ReadBack::Read(bytes, spans) = back.unwrap() else {
        panic!("not read back")
    };
    let first = &input.as_bytes()[1..input.find("}, ").unwrap() + 1];
    assert_eq!(&bytes[spans[1].start..spans[1].end], first);
    assert!(bytes[spans[0].start..spans[0].end].starts_with(br#"{"fragment_id": "b""#));
    let mut columns = Columns::new(4, &Tuning::default()).unwrap();
    let streamed = stream_records(
        &mut Cursor::new(&input),
        None,
        &mut columns,
        &tuning,
        &mut unasked(),
    )
    .unwrap();
    assert_eq!(streamed, Streamed::Read(records));
}

#[test]
fn a_file_compresses_as_its_bytes_do() {
    use crate::core::records::compression::compress_records;

    let (policy, core_tuning) = (Policy::default(), Tuning::default());
    let request = Request {
        budgets: &[60],
        strategy: Strategy::Greedy,
        policy: &policy,
        explain: false,
        tuning: &core_tuning,
        max_work: None,
        interrupt: &Uninterrupted,
        reuse: None,
    };
    for input in inputs() {
        let whole = compress_records(input.as_bytes(), None, request).unwrap();
        let expected = kept_spans(
            input.as_bytes(),
            &whole.starts,
            &whole.compression.selections[0].kept,
        );
        for chunk in [3, 64, 1 << 20] {
            let outcome = compress_record_file(
                &mut Cursor::new(input.as_bytes()),
                None,
                request,
                &tuning(chunk),
            )
            .unwrap()
            .unwrap();
            let FileCompression::Compressed { records, kept } = outcome else {
                panic!("{input}")
            };
            assert_eq!(records, whole);
            let (bytes, spans) = kept;
            let got: Vec<&[u8]> = spans.iter().map(|s| &bytes[s.start..s.end]).collect();
            let want: Vec<&[u8]> = expected
                .iter()
                .map(|s| &input.as_bytes()[s.start..s.end])
                .collect();
            assert_eq!(got, want);
        }
    }
    let wrapped = r#"{"fragments": []}"#;
    let outcome = compress_record_file(&mut Cursor::new(wrapped), None, request, &tuning(8))
        .unwrap()
        .unwrap();
    assert!(matches!(outcome, FileCompression::Whole(bytes) if bytes == wrapped.as_bytes()));
}

/// A file rewritten once it has been read to its end: seeking back then finds `then`.
struct Rewritten {
    file: Cursor<Vec<u8>>,
    then: Option<Vec<u8>>,
    ended: bool,
}

impl Rewritten {
    fn new(first: &str, then: &str) -> Self {
        Rewritten {
            file: Cursor::new(first.as_bytes().to_vec()),
            then: Some(then.as_bytes().to_vec()),
            ended: false,
        }
    }
}

impl Read for Rewritten {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let got = self.file.read(out)?;
        self.ended |= got == 0 && !out.is_empty();
        Ok(got)
    }
}

impl Seek for Rewritten {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        if self.ended {
            if let Some(then) = self.then.take() {
                *self.file.get_mut() = then;
            }
        }
        self.file.seek(to)
    }
}

fn request_for<'a>(
    budgets: &'a [u128],
    policy: &'a Policy,
    core_tuning: &'a Tuning,
    interrupt: &'a dyn Interrupt,
) -> Request<'a> {
    Request {
        budgets,
        strategy: Strategy::Greedy,
        policy,
        explain: false,
        tuning: core_tuning,
        max_work: None,
        interrupt,
        reuse: None,
    }
}

fn file_compressed(
    file: &mut (impl Read + Seek),
    counting: Option<Encoding>,
    interrupt: &dyn Interrupt,
) -> Result<FileCompression, RecordsRefusal> {
    let policy = Policy::default();
    let core_tuning = Tuning {
        interrupt_every: std::time::Duration::ZERO,
        ..Tuning::default()
    };
    let request = request_for(&[10], &policy, &core_tuning, interrupt);
    compress_record_file(file, counting, request, &tuning(16)).unwrap()
}

/// The kept records' text, when the file was compressed as it streamed.
fn kept_text(outcome: &FileCompression) -> Option<Vec<String>> {
    let FileCompression::Compressed { kept, .. } = outcome else {
        return None;
    };
    let (bytes, spans) = kept;
    Some(
        spans
            .iter()
            .map(|span| String::from_utf8(bytes[span.start..span.end].to_vec()).unwrap())
            .collect(),
    )
}

// "a" ranks first and is kept (8 tokens of 10); nothing else fits beside it.
const BEFORE: [&str; 3] = [
    r#"{"fragment_id": "b", "token_count": 5, "relevance_score": 0.25}"#,
    r#"{"fragment_id": "a", "token_count": 8, "relevance_score": 0.75, "required": false}"#,
    r#"{"fragment_id": "c", "token_count": 5, "relevance_score": 0.5, "group": "g"}"#,
];

#[test]
fn a_kept_record_rewritten_between_the_reads_is_refused() {
    let before = BEFORE.join("\n");
    let kept = kept_text(
        &file_compressed(&mut Cursor::new(before.clone()), None, &Uninterrupted).unwrap(),
    );
    assert_eq!(kept, Some(vec![BEFORE[1].to_owned()]));
    // Same length, so that the kept record is found where it was: each field alone.
    for (was, is) in [
        ("\"a\"", "\"x\""),
        ("\"token_count\": 8", "\"token_count\": 9"),
        ("0.75", "0.70"),
        ("false}", "true }"),
        (", \"required\": false}", ", \"group\": \"gg\"    }"),
        (", \"required\": false}", ", \"variant_of\": \"v\"}"),
    ] {
        let after = before.replacen(was, is, 1);
        assert_eq!(after.len(), before.len());
        let outcome = file_compressed(&mut Rewritten::new(&before, &after), None, &Uninterrupted);
        assert!(
            matches!(outcome, Err(RecordsRefusal::Changed)),
            "{is}: {outcome:?}"
        );
    }
}

#[test]
fn a_kept_record_rewritten_with_another_after_it_is_read_back_alone() {
    // Where the kept record was, it stands again as it was ranked (written another way),
    // and one more record after it, never ranked: the record is read back alone.
    let was = format!(
        r#"{{"fragment_id": "a", "token_count": 8, "relevance_score": 0.75{}}}"#,
        " ".repeat(60)
    );
    let alone = r#"{"fragment_id":"a","token_count":8,"relevance_score":0.75}"#;
    let two = format!(r#"{alone},{{"fragment_id":"z","token_count":1,"relevance_score":0"#);
    let is = format!("{two}{}}}", " ".repeat(was.len() - two.len() - 1));
    assert_eq!(is.len(), was.len());
    let lines = |kept: &str| [BEFORE[0], kept, BEFORE[2]].join("\n");
    let kept =
        kept_text(&file_compressed(&mut Cursor::new(lines(&was)), None, &Uninterrupted).unwrap());
    assert_eq!(kept, Some(vec![was.clone()]));
    let outcome = file_compressed(
        &mut Rewritten::new(&lines(&was), &lines(&is)),
        None,
        &Uninterrupted,
    );
    assert_eq!(kept_text(&outcome.unwrap()), Some(vec![alone.to_owned()]));
}

#[test]
fn a_kept_records_rewritten_variant_of_is_refused() {
    let before =
        r#"{"fragment_id": "a", "token_count": 8, "relevance_score": 0.75, "variant_of": "f1"}"#;
    let after = before.replace("f1", "f2");
    let kept = kept_text(
        &file_compressed(&mut Cursor::new(before.to_owned()), None, &Uninterrupted).unwrap(),
    );
    assert_eq!(kept, Some(vec![before.to_owned()]));
    let outcome = file_compressed(&mut Rewritten::new(before, &after), None, &Uninterrupted);
    assert!(
        matches!(outcome, Err(RecordsRefusal::Changed)),
        "{outcome:?}"
    );
}

#[test]
fn a_rewritten_content_whose_tokens_were_counted_is_refused() {
    let counted = |content: &str| {
        format!(
            r#"{{"fragment_id": "a", "relevance_score": 0.5, "content": "{content}"}}
{{"fragment_id": "b", "token_count": 50, "relevance_score": 0.25}}"#
        )
    };
    let (before, after) = (counted("one two three"), counted("onetwothree  "));
    let encoding = Some(Encoding::ALL[0]);
    let kept = kept_text(
        &file_compressed(&mut Cursor::new(before.clone()), encoding, &Uninterrupted).unwrap(),
    );
    assert_eq!(kept.map(|kept| kept.len()), Some(1));
    let outcome = file_compressed(
        &mut Rewritten::new(&before, &after),
        encoding,
        &Uninterrupted,
    );
    assert!(
        matches!(outcome, Err(RecordsRefusal::Changed)),
        "{outcome:?}"
    );
}

#[test]
fn what_changed_elsewhere_in_the_file_is_no_change_to_what_was_kept() {
    let before = BEFORE.join("\n");
    let appended = format!(
        "{before}\n{}",
        r#"{"fragment_id": "z", "token_count": 1, "relevance_score": 1}"#
    );
    let dropped = before.replacen("\"b\"", "\"y\"", 1);
    for after in [appended, dropped] {
        let outcome = file_compressed(&mut Rewritten::new(&before, &after), None, &Uninterrupted);
        assert_eq!(
            kept_text(&outcome.unwrap()),
            Some(vec![BEFORE[1].to_owned()]),
            "{after}"
        );
    }
    // Cut short before the kept record: read again whole, as it is now.
    let cut = &before[..before.find("\n{\"fragment_id\": \"a\"").unwrap()];
    let outcome = file_compressed(&mut Rewritten::new(&before, cut), None, &Uninterrupted);
    assert!(
        matches!(&outcome, Ok(FileCompression::Whole(bytes)) if bytes == cut.as_bytes()),
        "{outcome:?}"
    );
}

#[test]
fn every_reader_of_a_file_stops_when_asked() {
    use crate::core::test_support::InterruptAt;
    use std::sync::atomic::Ordering;

    let lines = BEFORE.join("\n");
    let wrapped = format!("{{\"fragments\": [{}]}}", BEFORE.join(", "));
    for input in [lines, wrapped] {
        let never = InterruptAt::new(usize::MAX);
        assert!(file_compressed(&mut Cursor::new(input.clone()), None, &never).is_ok());
        // Every chunk streamed, read back or read whole, and every record read or read again.
        let asked = never.asked.load(Ordering::Relaxed);
        assert!(asked > input.len() / 16, "{asked}");
        for from in 1..=asked {
            let interrupt = InterruptAt::new(from);
            let outcome = file_compressed(&mut Cursor::new(input.clone()), None, &interrupt);
            assert!(
                matches!(outcome, Err(RecordsRefusal::Interrupted)),
                "{from}: {outcome:?}"
            );
            assert_eq!(interrupt.asked.load(Ordering::Relaxed), from);
        }
    }
}

/// Gives its bytes a few at a time, and is cut short by a signal before each read.
struct Signalled<'a> {
    bytes: &'a [u8],
    signalled: bool,
}

impl Read for Signalled<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.signalled = !self.signalled;
        if self.signalled {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let got = out.len().min(self.bytes.len()).min(3);
        out[..got].copy_from_slice(&self.bytes[..got]);
        self.bytes = &self.bytes[got..];
        Ok(got)
    }
}

#[test]
fn a_whole_input_is_read_to_its_end_whatever_room_was_expected() {
    let input = BEFORE.join("\n");
    for (expected, chunk) in [(0, 1), (0, 5), (input.len(), 4096), (3, 7), (1 << 20, 2)] {
        let mut source = Signalled {
            bytes: input.as_bytes(),
            signalled: false,
        };
        let whole = read_whole(&mut source, expected, chunk, &mut unasked()).unwrap();
        assert_eq!(whole, Whole::Read(input.clone().into_bytes()));
    }
}

#[test]
fn a_streamed_input_reads_on_through_reads_a_signal_cut_short() {
    let input = BEFORE.join("\n");
    let mut columns = Columns::new(4, &Tuning::default()).unwrap();
    let mut source = Signalled {
        bytes: input.as_bytes(),
        signalled: false,
    };
    let read = stream_records(&mut source, None, &mut columns, &tuning(5), &mut unasked());
    assert_eq!(read.unwrap(), Streamed::Read(whole(input.as_bytes())));
}

/// A source whose every read fails.
struct Failing;

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(io::ErrorKind::PermissionDenied.into())
    }
}

impl Seek for Failing {
    fn seek(&mut self, _: SeekFrom) -> io::Result<u64> {
        Ok(0)
    }
}

#[test]
fn a_failed_read_is_its_error_streamed_or_whole() {
    let mut columns = Columns::new(4, &Tuning::default()).unwrap();
    let read = stream_records(&mut Failing, None, &mut columns, &tuning(5), &mut unasked());
    assert_eq!(read.unwrap_err().kind(), io::ErrorKind::PermissionDenied);
    let read = read_whole(&mut Failing, 0, 5, &mut unasked());
    assert_eq!(read.unwrap_err().kind(), io::ErrorKind::PermissionDenied);
    // Reading the kept records back too: an error, not a file that changed.
    let read = read_kept(&mut Failing, &[0], &[0], &tuning(5), &mut unasked());
    assert_eq!(read.unwrap_err().kind(), io::ErrorKind::PermissionDenied);
}

#[test]
fn memory_a_whole_input_cannot_have_is_an_answer() {
    let mut source = Cursor::new(b"[]".to_vec());
    let whole = read_whole(&mut source, usize::MAX, 8, &mut unasked()).unwrap();
    assert_eq!(whole, Whole::OutOfMemory);
}

#[test]
fn memory_a_chunk_cannot_have_leaves_the_input_to_be_read_whole() {
    // A chunk no allocation can hold: streaming gives the input up to the whole-input
    // reader, which says what it makes of it, where an infallible one would abort.
    assert_eq!(streamed(b"[]", usize::MAX / 2), Streamed::Unsure);
    let input = BEFORE.join("\n");
    let policy = Policy::default();
    let core_tuning = Tuning::default();
    let request = request_for(&[10], &policy, &core_tuning, &Uninterrupted);
    let mut file = Cursor::new(input.clone());
    let outcome = compress_record_file(&mut file, None, request, &tuning(usize::MAX / 2));
    // Read whole into room for the file's length, which it has.
    assert!(
        matches!(&outcome, Ok(Ok(FileCompression::Whole(bytes))) if *bytes == input.as_bytes()),
        "{outcome:?}"
    );
    let mut file = Cursor::new(input.clone());
    let kept = read_kept(
        &mut file,
        &[0],
        &[0],
        &tuning(usize::MAX / 2),
        &mut unasked(),
    );
    assert_eq!(kept.unwrap(), ReadBack::Gone);
}

#[test]
fn each_reader_asks_whether_to_stop_before_each_chunk() {
    use crate::core::test_support::InterruptAt;
    use std::sync::atomic::Ordering;

    // White space first: chunks with no record in them.
    let input = format!("{}{}", " ".repeat(100), BEFORE.join("\n"));
    let records = whole(input.as_bytes());
    let chunks = input.len().div_ceil(16);
    let asking = |from: usize| InterruptAt::new(from);
    let asked = |interrupt: &InterruptAt| interrupt.asked.load(Ordering::Relaxed);
    for from in [1, 3, 6] {
        let interrupt = asking(from);
        let mut checkpoint = Checkpoint::new(&interrupt, std::time::Duration::ZERO);
        let mut columns = Columns::new(4, &Tuning::default()).unwrap();
        let mut source = Cursor::new(&input);
        let streamed = stream_records(
            &mut source,
            None,
            &mut columns,
            &tuning(16),
            &mut checkpoint,
        );
        assert_eq!(streamed.unwrap(), Streamed::Interrupted);
        assert_eq!(
            (asked(&interrupt), source.position()),
            (from, 16 * from as u64 - 16)
        );

        let interrupt = asking(from);
        let mut checkpoint = Checkpoint::new(&interrupt, std::time::Duration::ZERO);
        let mut source = Cursor::new(&input);
        let whole = read_whole(&mut source, 0, 16, &mut checkpoint).unwrap();
        assert_eq!(whole, Whole::Interrupted);
        assert_eq!(
            (asked(&interrupt), source.position()),
            (from, 16 * from as u64 - 16)
        );
    }
    let last = records.starts.len() as u32 - 1;
    for from in [1, chunks / 2] {
        let interrupt = asking(from);
        let mut checkpoint = Checkpoint::new(&interrupt, std::time::Duration::ZERO);
        let mut source = Cursor::new(&input);
        let back = read_kept(
            &mut source,
            &records.starts,
            &[last],
            &tuning(16),
            &mut checkpoint,
        );
        assert_eq!(back.unwrap(), ReadBack::Interrupted);
        assert_eq!(
            (asked(&interrupt), source.position()),
            (from, 16 * from as u64 - 16)
        );
    }
}
