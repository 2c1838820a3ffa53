use super::*;
use crate::core::records::compression::{
    compress_records, kept_len, kept_spans, variant_rule_refused, write_kept, RecordsRefusal,
};
use crate::core::test_support::unasked;
use crate::core::{OnOverflow, Order, Policy, Request, Strategy, Tuning, Uninterrupted};

fn read(input: &str) -> Result<Records, ReadError> {
    read_bytes(input.as_bytes(), None)
}

fn read_bytes(input: &[u8], counting: Option<Encoding>) -> Result<Records, ReadError> {
    let mut columns = Columns::new(4, &Tuning::default()).unwrap();
    read_records(input, counting, &mut columns, &mut unasked())
}

fn texts<'a>(input: &'a str, records: &Records) -> Vec<&'a str> {
    records
        .starts
        .iter()
        .map(|&start| {
            let span = record_span(input, start);
            &input[span.start..span.end]
        })
        .collect()
}

fn record(id: &str, tokens: u64, score: &str) -> String {
    format!(r#"{{"fragment_id": "{id}", "token_count": {tokens}, "relevance_score": {score}}}"#)
}

fn problem_of(input: &str) -> RecordError {
    match read(input) {
        Err(ReadError::Record { error, .. }) => error,
        other => panic!("expected a record's problem, got {other:?}"),
    }
}

fn malformed(input: &str) -> (Form, usize, usize) {
    match read(input) {
        Err(ReadError::Malformed { form, resume, line }) => (form, resume, line),
        other => panic!("expected malformed JSON, got {other:?}"),
    }
}

#[test]
fn the_three_forms_and_where_each_record_is() {
    let (a, b) = (record("a", 1, "0.5"), record("b", 2, "1"));
    let array = format!("[\n  {a},\n  {b}\n]\n");
    let records = read(&array).unwrap();
    assert_eq!(records.form, Form::Array);
    assert_eq!(texts(&array, &records), [a.as_str(), b.as_str()]);

    let lines = format!("\n{a}\r\n   \n\t{b}  \n");
    let records = read(&lines).unwrap();
    assert_eq!(records.form, Form::Lines);
    assert_eq!(texts(&lines, &records), [a.as_str(), b.as_str()]);

    let wrapped = format!(r#" {{ "fragments" : [{a},{b}], "skeleton_metadata": {{"x": [1]}}}}"#);
    let records = read(&wrapped).unwrap();
    assert_eq!(records.form, Form::Wrapped);
    assert_eq!(texts(&wrapped, &records), [a.as_str(), b.as_str()]);
}

#[test]
fn an_object_whose_first_key_is_not_fragments_is_a_line_of_records() {
    let line = r#"{"fragment_id": "f", "token_count": 1, "relevance_score": 0, "fragments": []}"#;
    assert_eq!(read(line).unwrap().form, Form::Lines);
    assert_eq!(form_of(br#"{"fragments" 1"#), Some(Form::Lines));
    assert_eq!(form_of(b" \n"), None);
}

#[test]
fn a_byte_order_mark_is_skipped_and_spans_count_it() {
    let input = format!("\u{feff}[{}]", record("a", 1, "0.5"));
    let records = read(&input).unwrap();
    assert_eq!(records.starts[0], 4);
}

#[test]
fn empty_inputs_have_no_records_but_empty_arrays_are_fine() {
    for empty in ["", " \n\t\r\n", "\u{feff}", "\n\n"] {
        assert_eq!(read(empty), Err(ReadError::NoRecords), "{empty:?}");
    }
    assert!(read("[]").unwrap().starts.is_empty());
    assert!(read(r#"{"fragments": []}"#).unwrap().starts.is_empty());
}

#[test]
fn invalid_utf8_says_where() {
    let mut input = b"[\n".to_vec();
    input.extend_from_slice(b"\xff]");
    assert_eq!(
        read_bytes(&input, None),
        Err(ReadError::NotUtf8 { offset: 2 })
    );
    let mut input = BOM.to_vec();
    input.extend_from_slice(b"[\xed\xa0\x80]");
    assert_eq!(
        read_bytes(&input, None),
        Err(ReadError::NotUtf8 { offset: 4 })
    );
}

#[test]
fn malformed_json_says_where_to_look() {
    let a = record("a", 1, "0.5");
    let text = format!("[{a},\n{a} {a}]");
    assert_eq!(malformed(&text), (Form::Array, a.len() + 3, 2));
    assert_eq!(malformed("[1,]").0, Form::Array);
    assert_eq!(malformed(&format!("[{a}] x")).0, Form::Array);
    let lines = format!("{a}\n\n{{oops}}\n{a}");
    assert_eq!(malformed(&lines), (Form::Lines, a.len() + 2, 3));
    assert_eq!(malformed(&format!("{a} {a}")), (Form::Lines, 0, 1));
    for constant in ["NaN", "Infinity", "-Infinity"] {
        let text =
            format!(r#"[{{"fragment_id": "a", "token_count": 1, "relevance_score": {constant}}}]"#);
        assert_eq!(malformed(&text).0, Form::Array, "{constant}");
    }
    assert_eq!(
        malformed(&format!(r#"{{"fragments": [{a}], "fragments": []}}"#)).0,
        Form::Wrapped
    );
    // A raw control character in a key; escaped, it is allowed.
    let raw_key = format!("{{\"fragments\": [{a}], \"\nn\": 1}}");
    assert_eq!(malformed(&raw_key).0, Form::Wrapped);
    let escaped_key = format!(r#"{{"fragments": [{a}], "\nn": 1}}"#);
    assert!(read(&escaped_key).is_ok());
    let raw_in_record = r#"{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5, "x"#;
    assert_eq!(
        malformed(&format!("[{raw_in_record}\t\": [1]}}]")).0,
        Form::Array
    );
}

#[test]
fn values_nested_past_the_limit_are_malformed() {
    let nested = |levels: usize| "[".repeat(levels) + &"]".repeat(levels);
    let at = |levels: usize| {
        format!(
            r#"[{{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5, "x": {}}}]"#,
            nested(levels)
        )
    };
    assert!(read(&at(MAX_DEPTH - 1)).is_ok());
    assert_eq!(malformed(&at(MAX_DEPTH)), (Form::Array, 1, 1));
    assert_eq!(
        malformed(&format!("[{}]", nested(MAX_DEPTH + 1))).0,
        Form::Array
    );
    assert!(matches!(
        read(&format!("[{}]", nested(MAX_DEPTH))),
        Err(ReadError::Record { .. })
    ));
    let member = format!(r#"{{"fragments": [], "other": {}}}"#, nested(MAX_DEPTH + 1));
    assert_eq!(malformed(&member).0, Form::Wrapped);
    let member = format!(r#"{{"fragments": [], "other": {}}}"#, nested(MAX_DEPTH));
    assert!(read(&member).is_ok());
    // `fragments` that is not an array: malformed past the limit, else not an array.
    let fragments = |levels: usize| format!(r#"{{"fragments": {{"a": {}}}}}"#, nested(levels));
    assert_eq!(malformed(&fragments(MAX_DEPTH)).0, Form::Wrapped);
    assert_eq!(
        read(&fragments(MAX_DEPTH - 1)),
        Err(ReadError::FragmentsNotArray(JsonType::Object))
    );
}

#[test]
fn malformed_json_anywhere_comes_before_a_records_problem() {
    let text = format!("[{}, {}, oops]", record("a", 1, "2"), record("b", 1, "0.5"));
    assert_eq!(malformed(&text).0, Form::Array);
}

#[test]
fn fragments_must_be_an_array() {
    assert_eq!(
        read(r#"{"fragments": {"a": 1}}"#),
        Err(ReadError::FragmentsNotArray(JsonType::Object))
    );
    assert_eq!(
        read(r#"{"fragments": null}"#),
        Err(ReadError::FragmentsNotArray(JsonType::Null))
    );
}

fn got(json_type: JsonType, number: Option<&str>) -> Option<Got> {
    Some(Got {
        json_type,
        number: number.map(str::to_owned),
    })
}

#[test]
fn each_problem_of_a_record() {
    let one = |fields: &str| problem_of(&format!("[{{{fields}}}]"));
    let base = r#""fragment_id": "a", "token_count": 1, "relevance_score": 0.5"#;
    let cases: Vec<(String, Problem, Option<Got>)> = vec![
        (
            r#""token_count": 1, "relevance_score": 0.5"#.into(),
            Problem::Missing(Field::FragmentId),
            None,
        ),
        (
            r#""fragment_id": "a", "relevance_score": 0.5"#.into(),
            Problem::Missing(Field::TokenCount),
            None,
        ),
        (
            r#""fragment_id": 7, "token_count": 1"#.into(),
            Problem::Missing(Field::RelevanceScore),
            None,
        ),
        (
            r#""fragment_id": 7, "token_count": 1, "relevance_score": 0.5"#.into(),
            Problem::Value(ErrorKind::IdType),
            got(JsonType::Number, Some("7")),
        ),
        (
            r#""fragment_id": "", "token_count": 1, "relevance_score": 0.5"#.into(),
            Problem::Value(ErrorKind::IdEmpty),
            None,
        ),
        (
            r#""fragment_id": "a", "token_count": 1.0, "relevance_score": 0.5"#.into(),
            Problem::Value(ErrorKind::TokenType),
            got(JsonType::Number, Some("1.0")),
        ),
        (
            r#""fragment_id": "a", "token_count": "1", "relevance_score": 0.5"#.into(),
            Problem::Value(ErrorKind::TokenType),
            got(JsonType::String, None),
        ),
        (
            r#""fragment_id": "a", "token_count": true, "relevance_score": 0.5"#.into(),
            Problem::Value(ErrorKind::TokenType),
            got(JsonType::Boolean, None),
        ),
        (
            r#""fragment_id": "a", "token_count": -4, "relevance_score": 0.5"#.into(),
            Problem::Value(ErrorKind::TokenNegative),
            got(JsonType::Number, Some("-4")),
        ),
        (
            r#""fragment_id": "a", "token_count": 9223372036854775808, "relevance_score": 0.5"#
                .into(),
            Problem::Value(ErrorKind::TokenTooLarge),
            got(JsonType::Number, Some("9223372036854775808")),
        ),
        (
            format!(
                r#""fragment_id": "a", "token_count": {}, "relevance_score": 0.5"#,
                "1".repeat(5000)
            ),
            Problem::Value(ErrorKind::TokenTooLarge),
            got(JsonType::Number, Some(&"1".repeat(5000))),
        ),
        (
            r#""fragment_id": "a", "token_count": 1, "relevance_score": null"#.into(),
            Problem::Value(ErrorKind::RelevanceType),
            got(JsonType::Null, None),
        ),
        (
            r#""fragment_id": "a", "token_count": 1, "relevance_score": 1e400"#.into(),
            Problem::Value(ErrorKind::RelevanceRange),
            got(JsonType::Number, Some("1e400")),
        ),
        (
            r#""fragment_id": "a", "token_count": 1, "relevance_score": 2"#.into(),
            Problem::Value(ErrorKind::RelevanceRange),
            got(JsonType::Number, Some("2")),
        ),
        (
            format!(r#"{base}, "required": 1"#),
            Problem::Value(ErrorKind::RequiredType),
            got(JsonType::Number, Some("1")),
        ),
        (
            format!(r#"{base}, "required": null"#),
            Problem::Value(ErrorKind::RequiredType),
            got(JsonType::Null, None),
        ),
        (
            format!(r#"{base}, "group": ["g"]"#),
            Problem::Value(ErrorKind::GroupType),
            got(JsonType::Array, None),
        ),
        (
            format!(r#"{base}, "group": """#),
            Problem::Value(ErrorKind::GroupEmpty),
            None,
        ),
        (
            format!(r#"{base}, "variant_of": 7"#),
            Problem::Value(ErrorKind::VariantType),
            got(JsonType::Number, Some("7")),
        ),
        (
            format!(r#"{base}, "variant_of": false"#),
            Problem::Value(ErrorKind::VariantType),
            got(JsonType::Boolean, None),
        ),
        (
            format!(r#"{base}, "variant_of": {{"f": 1}}"#),
            Problem::Value(ErrorKind::VariantType),
            got(JsonType::Object, None),
        ),
        (
            format!(r#"{base}, "variant_of": """#),
            Problem::Value(ErrorKind::VariantEmpty),
            None,
        ),
        (
            // The group is checked first, as the library checks a fragment's fields.
            format!(r#"{base}, "variant_of": "", "group": 1"#),
            Problem::Value(ErrorKind::GroupType),
            got(JsonType::Number, Some("1")),
        ),
        (
            format!(r#"{base}, "required": 0, "variant_of": """#),
            Problem::Value(ErrorKind::RequiredType),
            got(JsonType::Number, Some("0")),
        ),
    ];
    for (fields, problem, expected) in cases {
        let error = one(&fields);
        assert_eq!((error.problem, error.got), (problem, expected), "{fields}");
    }
    let error = problem_of("[\"text\"]");
    assert_eq!(error.problem, Problem::NotObject);
    assert_eq!(error.got, got(JsonType::String, None));
}

#[test]
fn variant_of_is_read_as_null_or_a_name() {
    let base = r#""fragment_id": "a", "token_count": 1, "relevance_score": 0.5"#;
    for fields in [
        base.to_owned(),
        format!(r#"{base}, "variant_of": null"#),
        format!(r#"{base}, "variant_of": "file\u0041", "group": "g""#),
        format!(r#"{base}, "variant_of": 1, "variant_of": "f""#),
    ] {
        let text = format!("{{{fields}}}");
        assert_eq!(read(&text).unwrap().starts, [0], "{fields}");
    }
}

/// Each record's fingerprint, as the columns it was read into give them.
fn fingerprints_of(input: &str) -> Vec<u64> {
    let mut columns = Columns::new(4, &Tuning::default()).unwrap();
    read_records(input.as_bytes(), None, &mut columns, &mut unasked()).unwrap();
    columns.fingerprints()
}

#[test]
fn variant_of_is_read_into_the_columns() {
    let base = r#""fragment_id": "a", "token_count": 1, "relevance_score": 0.5"#;
    let with = |variant: &str| fingerprints_of(&format!("{{{base}{variant}}}"));
    let none = with("");
    assert_eq!(with(r#", "variant_of": null"#), none);
    let named = with(r#", "variant_of": "f""#);
    assert_ne!(named, none);
    assert_eq!(with(r#", "variant_of": "\u0066""#), named);
    assert_ne!(with(r#", "variant_of": "g""#), named);
    // A name read as a variant is not the same name read as a group.
    assert_ne!(with(r#", "group": "f""#), named);
}

#[test]
fn a_problem_names_its_record_and_id() {
    let text = format!(
        "{}\n{}\n{}",
        record("a", 1, "0.5"),
        record("b\\u00e9", 1, "3"),
        record("c", 1, "7")
    );
    let error = problem_of(&text);
    assert_eq!(error.index, 1);
    assert_eq!(error.start, text.find('\n').unwrap() + 1);
    assert_eq!(error.fragment_id.as_deref(), Some("b\u{e9}".as_bytes()));
    assert!(problem_of(r#"[{"fragment_id": 3}]"#).fragment_id.is_none());
}

#[test]
fn the_ids_of_records_read() {
    let text = format!(
        "[{}, {}]",
        record("a\\ud800", 1, "0.5"),
        record("b", 1, "0.5")
    );
    let records = read(&text).unwrap();
    let ids = fragment_ids(&text, &records.starts);
    assert_eq!(ids, [&b"a\xed\xa0\x80"[..], b"b"]);
}

#[test]
fn the_last_of_repeated_keys_counts_and_keys_may_be_escaped() {
    let text = r#"[{"fragment_id": 1, "fragment\u005fid": "a", "token_count": -1, "token_count": 2, "relevance_score": 0.5}]"#;
    assert_eq!(read(text).unwrap().starts.len(), 1);
    let text =
        r#"[{"\ud800": 1, "fragment_id": "\udc00", "token_count": 2, "relevance_score": 0.5}]"#;
    assert_eq!(read(text).unwrap().starts.len(), 1);
}

#[test]
fn counting_content_without_a_token_count() {
    let encoding = Some(Encoding::Cl100kBase);
    let text = br#"[{"fragment_id": "a", "relevance_score": 0.5, "content": "hello world"}]"#;
    assert!(read_bytes(text, encoding).is_ok());
    let error = |text: &[u8]| match read_bytes(text, encoding) {
        Err(ReadError::Record { error, .. }) => (error.problem, error.got),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        error(br#"[{"fragment_id": "a", "relevance_score": 0.5}]"#),
        (Problem::NoContent, None)
    );
    assert_eq!(
        error(br#"[{"fragment_id": "a", "relevance_score": 0.5, "content": 5}]"#),
        (Problem::ContentType, got(JsonType::Number, Some("5")))
    );
}

fn request<'a>(budgets: &'a [u128], policy: &'a Policy, tuning: &'a Tuning) -> Request<'a> {
    Request {
        budgets,
        strategy: Strategy::Greedy,
        policy,
        explain: false,
        tuning,
        max_work: None,
        interrupt: &Uninterrupted,
        reuse: None,
    }
}

#[test]
fn compress_and_write_the_kept_records_back_as_they_were() {
    let text = format!(
        "{}\n{}\n{}\n",
        r#"{"fragment_id": "a", "token_count": 5, "relevance_score": 0.1}"#,
        r#"{ "relevance_score": 0.9, "token_count": 5, "fragment_id": "b" ,"x": [1,2]}"#,
        r#"{"fragment_id": "c", "token_count": 5, "relevance_score": 0.5e0}"#,
    );
    let (policy, tuning) = (Policy::default(), Tuning::default());
    let done = compress_records(text.as_bytes(), None, request(&[10], &policy, &tuning)).unwrap();
    let selection = &done.compression.selections[0];
    assert_eq!(selection.kept, [1, 2]);
    let spans = kept_spans(text.as_bytes(), &done.starts, &selection.kept);
    let mut out = Vec::new();
    write_kept(text.as_bytes(), &spans, &mut out).unwrap();
    assert_eq!(out.len(), kept_len(&spans));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(out, format!("[{}, {}]", lines[1], lines[2]).into_bytes());

    let mut none = Vec::new();
    write_kept(text.as_bytes(), &[], &mut none).unwrap();
    assert_eq!(none.len(), kept_len(&[]));
    assert_eq!(none, b"[]");
}

#[test]
fn duplicates_and_budgets_are_refused_with_where_they_are() {
    let (a, b) = (record("a", 5, "0.5"), record("b", 5, "0.5"));
    let text = format!("[{a}, {b}, {a}]");
    let (policy, tuning) = (Policy::default(), Tuning::default());
    let refusal =
        compress_records(text.as_bytes(), None, request(&[10], &policy, &tuning)).unwrap_err();
    let RecordsRefusal::Duplicate {
        form,
        duplicate,
        starts,
    } = refusal
    else {
        panic!("{refusal:?}")
    };
    assert_eq!(
        (form, duplicate.first, duplicate.second),
        (Form::Array, 0, 2)
    );
    assert_eq!(starts, [1, text.rfind('{').unwrap()]);

    let text =
        r#"[{"fragment_id": "a", "token_count": 5, "relevance_score": 0.5, "required": true}]"#;
    let strict = Policy {
        on_overflow: OnOverflow::Raise,
        order: Order::Ranking,
        min_relevance: 0.0,
    };
    let refusal =
        compress_records(text.as_bytes(), None, request(&[4], &strict, &tuning)).unwrap_err();
    assert!(
        matches!(refusal, RecordsRefusal::BudgetExceeded(_)),
        "{refusal:?}"
    );
}

#[test]
fn reading_stops_when_asked_and_asks_by_the_bytes_read_not_by_the_record() {
    use crate::core::test_support::InterruptAt;
    use std::sync::atomic::Ordering;

    let records: Vec<String> = (0..3000)
        .map(|index| record(&format!("r{index}"), 1, "0.5"))
        .collect();
    let forms = [
        records.join("\n"),
        format!("[{}]", records.join(", ")),
        format!("{{\"fragments\": [{}]}}", records.join(", ")),
    ];
    for text in &forms {
        let read_asking = |interrupt: &InterruptAt| {
            let mut columns = Columns::new(4, &Tuning::default()).unwrap();
            let mut checkpoint = Checkpoint::new(interrupt, std::time::Duration::ZERO);
            read_records(text.as_bytes(), None, &mut columns, &mut checkpoint)
        };
        let never = InterruptAt::new(usize::MAX);
        assert_eq!(read_asking(&never).unwrap().starts.len(), 3000);
        let asked = never.asked.load(Ordering::Relaxed);
        // The first record asks, then every 64 KiB of records.
        assert!(
            (2..=1 + text.len() / (64 << 10)).contains(&asked),
            "{asked}"
        );
        for from in 1..=asked {
            let interrupt = InterruptAt::new(from);
            assert_eq!(read_asking(&interrupt), Err(ReadError::Interrupted));
            assert_eq!(interrupt.asked.load(Ordering::Relaxed), from);
        }
    }
}

#[test]
fn an_interrupted_read_is_an_interrupted_compression() {
    let text = record("a", 1, "0.5");
    let (policy, tuning) = (
        Policy::default(),
        Tuning {
            interrupt_every: std::time::Duration::ZERO,
            ..Tuning::default()
        },
    );
    let interrupt = crate::core::test_support::InterruptAt::new(1);
    let request = Request {
        interrupt: &interrupt,
        reuse: None,
        ..request(&[10], &policy, &tuning)
    };
    assert_eq!(
        compress_records(text.as_bytes(), None, request),
        Err(RecordsRefusal::Interrupted)
    );
}

#[test]
fn the_names_a_record_carries() {
    let text = r#"[{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5},
{"fragment_id": "b\u00e9", "token_count": 1, "relevance_score": 0.5, "group": "g",
 "variant_of": "f\n", "x": [1]},
{"fragment_id": "c", "token_count": 1, "relevance_score": 0.5, "group": null,
 "variant_of": null}]"#;
    let starts = read(text).unwrap().starts;
    let names: Vec<RecordNames> = starts
        .iter()
        .map(|&start| record_names(text, start))
        .collect();
    let name = |bytes: &'static [u8]| Some(Cow::Borrowed(bytes));
    assert_eq!(
        names,
        [
            RecordNames {
                fragment_id: Cow::Borrowed(b"a"),
                group: None,
                variant_of: None,
            },
            RecordNames {
                fragment_id: Cow::Borrowed("b\u{e9}".as_bytes()),
                group: name(b"g"),
                variant_of: name(b"f\n"),
            },
            RecordNames {
                fragment_id: Cow::Borrowed(b"c"),
                group: None,
                variant_of: None,
            },
        ]
    );
}

#[test]
fn a_broken_variant_rule_names_where_both_records_start() {
    let refusal = variant_rule_refused(
        Form::Lines,
        &[0, 40, 95],
        ErrorKind::VariantRequiredTwice,
        2,
        0,
    );
    assert_eq!(
        refusal,
        RecordsRefusal::VariantRule {
            form: Form::Lines,
            kind: ErrorKind::VariantRequiredTwice,
            index: 2,
            first_index: 0,
            starts: [95, 0],
        }
    );
}

#[test]
fn problems_and_fields_have_the_names_python_words_them_under() {
    // `skeleton_compressor._records.errors` words each problem by these names, in this order.
    let names = Problem::ALL.map(Problem::name);
    assert_eq!(
        names,
        [
            "not_object",
            "missing_field",
            "id_type",
            "id_empty",
            "token_type",
            "token_negative",
            "token_too_large",
            "relevance_type",
            "relevance_range",
            "required_type",
            "group_type",
            "group_empty",
            "variant_type",
            "variant_empty",
            "no_content",
            "content_type",
        ]
    );
    let fields = [Field::FragmentId, Field::TokenCount, Field::RelevanceScore];
    assert_eq!(
        fields.map(Field::name),
        ["fragment_id", "token_count", "relevance_score"]
    );
}

#[test]
fn whether_fragments_comes_first_is_unknown_until_the_key_and_its_colon_are_read() {
    for rest in [
        "",
        " ",
        "\"",
        "\"frag",
        "\"fragments",
        "\"fragments\"",
        "\"fragments\" ",
    ] {
        assert_eq!(fragments_first(rest.as_bytes()), None, "{rest:?}");
    }
    for rest in ["\"fragments\":", " \"fragments\" :[", "\"fragments\":1"] {
        assert_eq!(fragments_first(rest.as_bytes()), Some(true), "{rest:?}");
    }
    for rest in [
        "\"x",
        "\"fragmentz\"",
        "\"fragments\",",
        "\"fragments_\":",
        "}",
        "1",
    ] {
        assert_eq!(fragments_first(rest.as_bytes()), Some(false), "{rest:?}");
    }
}

#[test]
fn a_records_keys_are_read_again_from_where_it_starts() {
    let text = r#"[{"a": 1, "b": {"c": 2}, "a": 3}, {"fragment_id": "x", "d": null}]"#;
    let records = read(text);
    let error = match records {
        Err(ReadError::Record { error, .. }) => error,
        other => panic!("expected a missing field, got {other:?}"),
    };
    assert_eq!(error.problem, Problem::Missing(Field::FragmentId));
    // Each key once, in the order it first comes; only the keys of the record asked for.
    assert_eq!(record_keys(text, error.start), [&b"a"[..], b"b"]);
    let second = text.find(r#"{"fragment_id""#).unwrap();
    assert_eq!(record_keys(text, second), [&b"fragment_id"[..], b"d"]);
    assert!(record_keys(text, text.len()).is_empty());
}

#[test]
fn a_span_that_is_not_json_runs_to_the_end_of_the_text() {
    // Where nothing at `start` reads as one value, the rest of the text is the span.
    let text = r#"[{"a": 1}, {"b": [1, "#;
    let start = text.rfind('{').unwrap();
    assert_eq!(
        record_span(text, start),
        Span {
            start,
            end: text.len()
        }
    );
    let first = text.find('{').unwrap();
    assert_eq!(
        record_span(text, first),
        Span {
            start: first,
            end: text.find('}').unwrap() + 1
        }
    );
}

#[test]
fn a_relevance_of_minus_zero_is_read_as_zero() {
    // Python calls -0.0 and 0.0 equal; ranked by its bits, -0.0 would come before every
    // positive score.
    let text = [
        r#"{"fragment_id": "a", "token_count": 5, "relevance_score": -0.0}"#,
        r#"{"fragment_id": "b", "token_count": 5, "relevance_score": 0.5}"#,
    ]
    .join("\n");
    let (policy, tuning) = (Policy::default(), Tuning::default());
    let done = compress_records(text.as_bytes(), None, request(&[5], &policy, &tuning)).unwrap();
    assert_eq!(done.compression.selections[0].kept, [1]);
}
