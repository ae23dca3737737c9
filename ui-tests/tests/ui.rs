//! The derive's compile tests. trybuild: every `tests/fail/*.rs` fails to compile with its `.stderr` (checked with
//! `cargo check` in trybuild's own project). Every `tests/pass/*.rs` (each shape of struct the derive accepts)
//! is a module of this test binary: it compiles with the workspace's build and its `main` runs as a test.
//! Regenerate the expected errors with `TRYBUILD=overwrite cargo test --workspace --release --test ui`.

#[test]
fn derive_diagnostics() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/fail/*.rs");
}

mod pass {
    #[path = "../pass/deny_warnings.rs"]
    mod deny_warnings;
    #[path = "../pass/extra_repr_and_state.rs"]
    mod extra_repr_and_state;
    #[path = "../pass/generic_bounds_where.rs"]
    mod generic_bounds_where;
    #[path = "../pass/nested_containers.rs"]
    mod nested_containers;
    #[path = "../pass/only_derive_and_prelude.rs"]
    mod only_derive_and_prelude;
    #[path = "../pass/renamed_keys.rs"]
    mod renamed_keys;
    #[path = "../pass/runtime_members.rs"]
    mod runtime_members;
    #[path = "../pass/shared_modules.rs"]
    mod shared_modules;
    #[path = "../pass/skipped_config.rs"]
    mod skipped_config;
    #[path = "../pass/struct_in_function.rs"]
    mod struct_in_function;
    #[path = "../pass/tuple_struct.rs"]
    mod tuple_struct;
    #[path = "../pass/unit_struct.rs"]
    mod unit_struct;

    #[test]
    fn deny_warnings() {
        deny_warnings::main();
    }

    #[test]
    fn extra_repr_and_state() {
        extra_repr_and_state::main();
    }

    #[test]
    fn generic_bounds_where() {
        generic_bounds_where::main();
    }

    #[test]
    fn nested_containers() {
        nested_containers::main();
    }

    #[test]
    fn only_derive_and_prelude() {
        only_derive_and_prelude::main();
    }

    #[test]
    fn renamed_keys() {
        renamed_keys::main();
    }

    #[test]
    fn runtime_members() {
        runtime_members::main();
    }

    #[test]
    fn shared_modules() {
        shared_modules::main();
    }

    #[test]
    fn skipped_config() {
        skipped_config::main();
    }

    #[test]
    fn struct_in_function() {
        struct_in_function::main();
    }

    #[test]
    fn tuple_struct() {
        tuple_struct::main();
    }

    #[test]
    fn unit_struct() {
        unit_struct::main();
    }
}
