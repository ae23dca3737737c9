//! trybuild: every `tests/fail/*.rs` fails to compile with its `.stderr`, every `tests/pass/*.rs` compiles.
//! Regenerate the expected errors with `TRYBUILD=overwrite cargo test -p ui-tests --release`.

#[test]
fn derive_diagnostics() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/fail/*.rs");
    t.pass("tests/pass/*.rs");
}
