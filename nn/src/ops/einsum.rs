//! `torch.einsum`: a sum of products named by subscripts, composed of views (`diagonal`, `permute`, `expand`),
//! sums and batched products (`bmm`), so it runs on every device they run on and differentiates through them.
//! Operands are contracted left to right; a subscript no later operand or the output needs is summed out first.

use crate::{Error, Result, Tensor};

/// A subscript: a letter's byte, or `ELLIPSIS + k` for dimension `k` of the broadcast dimensions `...` stands
/// for (counted from the left of the widest).
type Label = u32;

const ELLIPSIS: Label = 256;
const OP: &str = "einsum";

/// The subscripts of one side of the equation, with whether it holds an ellipsis and where.
struct Term {
    /// Letters before the ellipsis, then after it.
    before: Vec<Label>,
    after: Vec<Label>,
    ellipsis: bool,
}

/// Parses `text`, the subscripts of operand `operand` (`None`: the output), starting at byte `at` of the equation.
fn parse_term(text: &str, at: usize, operand: Option<usize>) -> Result<Term> {
    let mut term = Term {
        before: Vec::new(),
        after: Vec::new(),
        ellipsis: false,
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'.' {
            let whose = operand.map_or("output".to_string(), |n| format!("operand {n}"));
            if term.ellipsis {
                let message = match operand {
                    Some(_) => format!("einsum(): found '.' for {whose} for which an ellipsis was already found"),
                    None => format!("einsum(): found '.' for {whose} but an ellipsis (...) was already found"),
                };
                return Err(Error::invalid(OP, message));
            }
            if !text[i..].starts_with("...") {
                let tail = if operand.is_some() { "" } else { " (...)" };
                return Err(Error::invalid(
                    OP,
                    format!("einsum(): found '.' for {whose} that is not part of any ellipsis{tail}"),
                ));
            }
            term.ellipsis = true;
            i += 3;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(Error::invalid(
                OP,
                format!(
                    "einsum(): invalid subscript given at index {} in the equation string, subscripts must be in \
                     [a-zA-Z]",
                    at + i
                ),
            ));
        }
        if term.ellipsis {
            term.after.push(c as Label);
        } else {
            term.before.push(c as Label);
        }
        i += 1;
    }
    Ok(term)
}

/// A label's name in PyTorch's messages.
fn name(label: Label) -> String {
    if label >= ELLIPSIS {
        "...".into()
    } else {
        char::from(label as u8).to_string()
    }
}

impl Tensor {
    /// The sum of products the subscripts in `equation` name (PyTorch's `torch.einsum`): `"ij,jk->ik"` is a
    /// matrix product, `"bij->bji"` a transpose, `"ii->i"` a diagonal, `"i,i->"` a dot product; without `->` the
    /// output is the subscripts that appear once, in alphabetical order (capitals first). `...` stands for
    /// broadcast dimensions.
    ///
    /// ```
    /// use nn::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])?;
    /// let b = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], [3, 2])?;
    /// assert_eq!(Tensor::einsum("ij,jk->ik", &[&a, &b])?.to_vec::<f32>()?, vec![4.0, 5.0, 10.0, 11.0]);
    /// assert_eq!(Tensor::einsum("ij->j", &[&a])?.to_vec::<f32>()?, vec![5.0, 7.0, 9.0]);
    /// assert_eq!(Tensor::einsum("ij,ij->", &[&a, &a])?.to_vec::<f32>()?, vec![91.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn einsum(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
        let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
        let (inputs, output) = match equation.split_once("->") {
            Some((inputs, output)) => (inputs, Some(output)),
            None => (equation.as_str(), None),
        };
        let mut terms = Vec::new();
        let mut at = 0;
        for (n, text) in inputs.split(',').enumerate() {
            terms.push(parse_term(text, at, Some(n))?);
            at += text.len() + 1;
        }
        if terms.len() > operands.len() {
            return Err(Error::invalid(
                OP,
                "einsum(): fewer operands were provided than specified in the equation",
            ));
        }
        if terms.len() < operands.len() {
            return Err(Error::invalid(
                OP,
                "einsum(): more operands were provided than specified in the equation",
            ));
        }
        // Each operand's labels, `...` spelled out as the dimensions it covers there.
        let mut widest = 0;
        for (i, (term, t)) in terms.iter().zip(operands).enumerate() {
            let named = term.before.len() + term.after.len();
            if (!term.ellipsis && named != t.rank()) || named > t.rank() {
                return Err(Error::invalid(
                    OP,
                    format!(
                        "einsum(): the number of subscripts in the equation ({named}) does not match the number of \
                         dimensions ({}) for operand {i}{}",
                        t.rank(),
                        if term.ellipsis {
                            ""
                        } else {
                            " and no ellipsis was given"
                        }
                    ),
                ));
            }
            widest = widest.max(t.rank() - named);
        }
        let labels: Vec<Vec<Label>> = terms
            .iter()
            .zip(operands)
            .map(|(term, t)| {
                let covered = t.rank() - term.before.len() - term.after.len();
                let dots = (widest - covered..widest).map(|k| ELLIPSIS + k as Label);
                term.before
                    .iter()
                    .copied()
                    .chain(dots)
                    .chain(term.after.iter().copied())
                    .collect()
            })
            .collect();
        let output = match output {
            Some(text) => {
                let term = parse_term(text, inputs.len() + 2, None)?;
                // Without `...` in the output, the dimensions it stands for are summed.
                let dots = (0..if term.ellipsis { widest } else { 0 }).map(|k| ELLIPSIS + k as Label);
                let out: Vec<Label> = term.before.iter().copied().chain(dots).chain(term.after).collect();
                for (i, &label) in out.iter().enumerate() {
                    if out[..i].contains(&label) {
                        return Err(Error::invalid(
                            OP,
                            format!(
                                "einsum(): output subscript {} appears more than once in the output",
                                name(label)
                            ),
                        ));
                    }
                    if !labels.iter().any(|l| l.contains(&label)) {
                        return Err(Error::invalid(
                            OP,
                            format!(
                                "einsum(): output subscript {} does not appear in the equation for any input operand",
                                name(label)
                            ),
                        ));
                    }
                }
                out
            }
            None => {
                // Ascending bytes: capitals first, as PyTorch orders the letters.
                let once = (b'A'..=b'z')
                    .map(Label::from)
                    .filter(|l| labels.iter().flatten().filter(|x| *x == l).count() == 1);
                (0..widest).map(|k| ELLIPSIS + k as Label).chain(once).collect()
            }
        };
        contract(operands, labels, &output)
    }
}

/// The size of each label over all operands (1 broadcasting to any other), or PyTorch's error.
fn label_sizes(operands: &[&Tensor], labels: &[Vec<Label>]) -> Result<std::collections::BTreeMap<Label, usize>> {
    let mut sizes = std::collections::BTreeMap::new();
    for (i, (t, ls)) in operands.iter().zip(labels).enumerate() {
        for (d, (&label, &size)) in ls.iter().zip(t.shape().iter()).enumerate() {
            if let Some(first) = ls[..d].iter().position(|&l| l == label).map(|p| t.shape()[p])
                && first != size
            {
                return Err(Error::invalid(
                    OP,
                    format!(
                        "einsum(): subscript {} is repeated for operand {i} but the sizes don't match, {size} != \
                         {first}",
                        name(label)
                    ),
                ));
            }
            let seen = sizes.entry(label).or_insert(size);
            if *seen == 1 {
                *seen = size;
            } else if size != 1 && size != *seen {
                return Err(Error::invalid(
                    OP,
                    format!(
                        "einsum(): subscript {} has size {size} for operand {i} which does not broadcast with \
                         previously seen size {seen}",
                        name(label)
                    ),
                ));
            }
        }
    }
    Ok(sizes)
}

/// `t` (of `labels`) with each repeated label reduced to its diagonal, moved last (PyTorch's `ii->i`).
fn diagonals(mut t: Tensor, mut labels: Vec<Label>) -> Result<(Tensor, Vec<Label>)> {
    while let Some((p, q)) = (0..labels.len())
        .flat_map(|p| (p + 1..labels.len()).map(move |q| (p, q)))
        .find(|&(p, q)| labels[p] == labels[q])
    {
        t = t.diagonal(0, p as isize, q as isize)?;
        let label = labels[p];
        labels.remove(q);
        labels.remove(p);
        labels.push(label);
    }
    Ok((t, labels))
}

/// `t` with the labels not in `keep` summed out.
fn sum_unneeded(t: Tensor, labels: Vec<Label>, keep: &[Label]) -> Result<(Tensor, Vec<Label>)> {
    let gone: Vec<isize> = (0..labels.len())
        .filter(|&d| !keep.contains(&labels[d]))
        .map(|d| d as isize)
        .collect();
    if gone.is_empty() {
        return Ok((t, labels));
    }
    let kept = labels.into_iter().filter(|l| keep.contains(l)).collect();
    Ok((t.sum_dims(&gone, false)?, kept))
}

/// `t` of `labels` permuted to `order` (a permutation of them) and reshaped to the products of `groups`' sizes.
fn grouped(
    t: &Tensor,
    labels: &[Label],
    groups: &[&[Label]],
    sizes: &std::collections::BTreeMap<Label, usize>,
) -> Result<Tensor> {
    let order: Vec<usize> = groups
        .iter()
        .flat_map(|g| g.iter())
        .map(|l| labels.iter().position(|x| x == l).expect("every label is grouped"))
        .collect();
    let shape: Vec<usize> = groups.iter().map(|g| g.iter().map(|l| sizes[l]).product()).collect();
    t.permute(&order)?.reshape(shape)
}

/// The operands contracted left to right into the `output` labels.
fn contract(operands: &[&Tensor], labels: Vec<Vec<Label>>, output: &[Label]) -> Result<Tensor> {
    let sizes = label_sizes(operands, &labels)?;
    let mut parts = Vec::with_capacity(operands.len());
    for (t, ls) in operands.iter().zip(labels) {
        let (t, ls) = diagonals((*t).clone(), ls)?;
        // Size-1 dimensions broadcast against the others' sizes (a view).
        let full: Vec<isize> = ls.iter().map(|l| sizes[l] as isize).collect();
        parts.push((t.expand(&full)?, ls));
    }
    // The labels operand `i` onwards, or the output, still need.
    let needed_after = |i: usize, parts: &[(Tensor, Vec<Label>)]| -> Vec<Label> {
        let mut keep = output.to_vec();
        parts[i..].iter().for_each(|(_, ls)| keep.extend(ls));
        keep
    };
    let mut rest = parts.into_iter();
    let (first, first_labels) = rest.next().expect("einsum has at least one operand");
    let rest: Vec<(Tensor, Vec<Label>)> = rest.collect();
    let (mut acc, mut acc_labels) = sum_unneeded(first, first_labels, &needed_after(0, &rest))?;
    for i in 0..rest.len() {
        let later = needed_after(i + 1, &rest);
        let (b, b_labels) = rest[i].clone();
        let mut keep = later.clone();
        keep.extend(&acc_labels);
        let (b, b_labels) = sum_unneeded(b, b_labels, &keep)?;
        let mut keep = later.clone();
        keep.extend(&b_labels);
        (acc, acc_labels) = sum_unneeded(acc, acc_labels, &keep)?;
        let batch: Vec<Label> = acc_labels
            .iter()
            .copied()
            .filter(|l| b_labels.contains(l) && later.contains(l))
            .collect();
        let summed: Vec<Label> = acc_labels
            .iter()
            .copied()
            .filter(|l| b_labels.contains(l) && !later.contains(l))
            .collect();
        let a_only: Vec<Label> = acc_labels.iter().copied().filter(|l| !b_labels.contains(l)).collect();
        let b_only: Vec<Label> = b_labels.iter().copied().filter(|l| !acc_labels.contains(l)).collect();
        let a = grouped(&acc, &acc_labels, &[&batch, &a_only, &summed], &sizes)?;
        let b = grouped(&b, &b_labels, &[&batch, &summed, &b_only], &sizes)?;
        let product = a.bmm(&b)?;
        acc_labels = batch.iter().chain(&a_only).chain(&b_only).copied().collect();
        let shape: Vec<usize> = acc_labels.iter().map(|l| sizes[l]).collect();
        acc = product.reshape(shape)?;
    }
    let (acc, acc_labels) = sum_unneeded(acc, acc_labels, output)?;
    let order: Vec<usize> = output
        .iter()
        .map(|l| {
            acc_labels
                .iter()
                .position(|x| x == l)
                .expect("every output label survives")
        })
        .collect();
    acc.permute(&order)
}
