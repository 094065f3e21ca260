//! Tests of the kernel catalogue against the shared kernel source.

use super::*;

/// The `extern "C"` kernels of the shared body and their parameter
/// lists (`ctype name`, `__restrict__` dropped).
fn body_signatures() -> Vec<(String, Vec<String>)> {
    signatures(spgemm_kernels_shared::BODY)
}

/// The `SPGEMM_FIXED_KERNEL` kernels of `body` and their parameter
/// lists.
fn signatures(body: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for piece in body.split("SPGEMM_FIXED_KERNEL void").skip(1) {
        let open = piece.find('(').unwrap();
        let mut head = piece[..open].trim();
        if head.starts_with("SPGEMM_LAUNCH_BOUNDS") {
            // `SPGEMM_LAUNCH_BOUNDS(a, b) name(`: the name follows the
            // bounds' closing parenthesis.
            let close = piece.find(')').unwrap();
            let rest = &piece[close + 1..];
            let open2 = rest.find('(').unwrap();
            head = rest[..open2].trim();
            let end = rest[open2..].find(')').unwrap();
            out.push((
                head.to_string(),
                split_params(&rest[open2 + 1..open2 + end]),
            ));
            continue;
        }
        let end = piece[open..].find(')').unwrap();
        out.push((head.to_string(), split_params(&piece[open + 1..open + end])));
    }
    out
}

fn split_params(list: &str) -> Vec<String> {
    list.split(',')
        .map(|p| {
            p.replace("__restrict__", "")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace(" *", "*")
        })
        .collect()
}

#[test]
fn catalogue_matches_the_kernels_of_the_shared_body() {
    let body = body_signatures();
    assert_eq!(body.len(), FIXED.len(), "{body:?}");
    for kernel in FIXED {
        let (_, params) = body
            .iter()
            .find(|(name, _)| *name == kernel.name())
            .unwrap_or_else(|| panic!("{} is not in the body", kernel.name()));
        let ours: Vec<String> = kernel
            .params()
            .iter()
            .map(|p| format!("{} {}", p.ctype, p.name))
            .collect();
        assert_eq!(&ours, params, "{}", kernel.name());
    }
}

#[test]
fn catalogue_matches_the_masked_dot_program() {
    let source = signatures(spgemm_kernels_shared::MASKED_DOT);
    let ours: Vec<(String, Vec<String>)> = MASKED
        .iter()
        .map(|k| {
            let params = k
                .params()
                .into_iter()
                .map(|p| format!("{} {}", p.ctype, p.name));
            (k.name(), params.collect())
        })
        .collect();
    assert_eq!(source, ours);
}

#[test]
fn a_struct_of_another_kernel_is_refused_before_launch() {
    let args = FillEmptyArgs {
        keys: DevicePtr(1 << 40),
        n: 9,
    };
    assert_eq!(
        launch_args(Kernel::FillEmpty, &args).unwrap(),
        vec![KernelArg::Ptr(1 << 40), KernelArg::U64(9)]
    );
    let e = launch_args(Kernel::SortStep, &args).unwrap_err();
    assert_eq!(e, "spgemm_sort_step is not launched with FillEmptyArgs");
}

#[test]
fn grouped_parameters_come_first() {
    let p = Kernel::NumericBin(3).params();
    assert_eq!(p.len(), 14);
    assert_eq!(
        (p[6].name, p[11].name, p[12].name, p[13].name),
        ("bins", "g", "distinct_rows", "band")
    );
    assert_eq!(
        Kernel::SymbolicDenseShared.c_params(),
        "const u64* arpt, const u32* acol, const u64* brpt, const u32* bcol, \
         const u32* bins, u32 nrows, u64* crpt, u32 g, u32 words, u32* distinct_rows, u32* repeat_rows"
    );
}
