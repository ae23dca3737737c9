//! Where each tensor of a zip checkpoint lies (its storage, offset, shape and strides), read from `data.pkl` by a
//! small pickle machine of nn's own: pytorch-reader reads a tensor's bytes but does not say where they are, and
//! the mapped loader needs that to make a tensor of the file's pages in place.
//!
//! The machine runs the binary opcodes of protocols 2–5 that `torch.save` writes for state dicts and checkpoints
//! (dicts, `OrderedDict`, lists, tuples, sets, ints, floats, strings, bytes, tensors rebuilt by
//! `torch._utils._rebuild_tensor_v2`, parameters, opaque objects beside them) and gives up ([`None`]) on anything
//! else, in which case the loader reads every tensor through pytorch-reader. It runs only on checkpoints
//! pytorch-reader has opened, and the loader uses what it finds only where it agrees with pytorch-reader (the same
//! names, dtypes and shapes). Where pytorch-reader reads a pickle differently from Python, this machine follows
//! pytorch-reader: a memo entry is a copy taken when it is stored (refreshed by `BUILD`), not an alias.
//!
//! Every length is checked against the bytes left before it is used, values are shared (`Rc`) rather than copied,
//! and nesting, memo size and the walk that names the tensors are bounded. The values it builds have the shapes
//! of those pytorch-reader built from the same pickle, which pytorch-reader bounds (it copies memo entries and
//! refuses a pickle whose copies pass a million nodes), so looking through them costs no more than that did.
//!
//! It also tells whether a pickle is a whole `torch.nn.Module` ([`root_is_module`]), which pytorch-reader reads as
//! the module's state dict.

use std::collections::HashMap;
use std::rc::Rc;

use pytorch_reader::DType;

/// Where one tensor's elements are: in the zip entry `data/<storage>`, from element `offset`, with `shape` and
/// `stride` in elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub storage: String,
    pub dtype: DType,
    /// Elements the storage declares.
    pub storage_len: usize,
    pub offset: usize,
    pub shape: Vec<usize>,
    pub stride: Vec<usize>,
}

impl Layout {
    /// Whether the elements are stored in row-major order with no gaps (strides of size-one dimensions do not
    /// matter, as in PyTorch).
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1usize;
        for (&dim, &step) in self.shape.iter().zip(&self.stride).rev() {
            if dim > 1 && step != expected {
                return false;
            }
            match expected.checked_mul(dim) {
                Some(next) => expected = next,
                None => return false,
            }
        }
        self.shape.len() == self.stride.len()
    }
}

/// Deepest nesting of containers followed; a deeper pickle is left to pytorch-reader.
const MAX_DEPTH: u32 = 200;

/// Most memo slots; a pickle of a state dict uses a few per tensor.
const MAX_MEMO: usize = 1 << 22;

/// Most values visited while naming the tensors (shared values are visited once per path that reaches them).
const MAX_VISITS: usize = 1 << 22;

/// The layout of every tensor under the checkpoint's root dict (or the dict under its top-level `key`), by the
/// dotted path pytorch-reader names it with (dict keys, list and tuple indices); [`None`] when the pickle holds
/// anything this machine does not follow, or two tensors share a name.
pub(crate) fn tensor_layouts(pickle: &[u8], key: Option<&str>) -> Option<HashMap<String, Layout>> {
    let root = Machine::default().run(pickle)?;
    let Value::Dict(top) = root else {
        return None;
    };
    let top = match key {
        None => top,
        Some(key) => match top.get(key)? {
            Value::Dict(inner) => inner.clone(),
            _ => return None,
        },
    };
    let mut names = Names::default();
    names.walk(&Value::Dict(top), &mut Vec::new(), 0)?;
    Some(names.found)
}

/// Whether the pickle is a `torch.nn.Module` itself (`torch.save(model)`), which pytorch-reader reads as the
/// module's state dict, nested by child; `false` also when this machine cannot tell.
pub(crate) fn root_is_module(pickle: &[u8]) -> bool {
    matches!(Machine::default().run(pickle), Some(Value::Module))
}

/// A value of the pickle, as far as naming tensors needs it.
#[derive(Clone, Debug)]
enum Value {
    None,
    Int(i64),
    Str(Rc<str>),
    /// A class or function named by `GLOBAL` / `STACK_GLOBAL`: module and name.
    Global(Rc<(String, String)>),
    Storage(Rc<Storage>),
    Tensor(Rc<Layout>),
    Tuple(Rc<Vec<Value>>),
    List(Rc<Vec<Value>>),
    Dict(Rc<HashMap<String, Value>>),
    /// A pickled `torch.nn.Module`, which pytorch-reader reads as its state dict; its tensors are not named here.
    Module,
    /// Anything else that holds no tensor: a bool, a float, bytes, an int wider than 64 bits, an object.
    Other,
}

/// A storage named by a persistent id: `('storage', FloatStorage, key, location, numel)`.
#[derive(Debug)]
struct Storage {
    key: String,
    dtype: DType,
    len: usize,
}

impl Value {
    fn holds_tensor_data(&self) -> bool {
        match self {
            Value::Storage(_) | Value::Tensor(_) | Value::Module => true,
            Value::Tuple(items) | Value::List(items) => items.iter().any(Value::holds_tensor_data),
            Value::Dict(map) => map.values().any(Value::holds_tensor_data),
            _ => false,
        }
    }

    /// A non-negative int, as a shape, stride, offset or count.
    fn non_negative(&self) -> Option<usize> {
        match self {
            Value::Int(i) => usize::try_from(*i).ok(),
            _ => None,
        }
    }

    /// A dict key or storage key: a str, or an int spelled in decimal.
    fn key(&self) -> Option<String> {
        match self {
            Value::Str(s) => Some(s.to_string()),
            Value::Int(i) => Some(i.to_string()),
            _ => None,
        }
    }

    /// The items of a tuple or list.
    fn items(&self) -> Option<&[Value]> {
        match self {
            Value::Tuple(items) | Value::List(items) => Some(items),
            _ => None,
        }
    }
}

/// A slot of the stack or the memo: the value, how deeply it nests containers, and the memo slot it was last
/// stored in.
#[derive(Clone, Debug)]
struct Entry {
    value: Value,
    depth: u32,
    memo: Option<u32>,
}

impl Entry {
    fn scalar(value: Value) -> Entry {
        Entry {
            value,
            depth: 0,
            memo: None,
        }
    }
}

#[derive(Default)]
struct Machine {
    stack: Vec<Entry>,
    /// Stack heights at each open `MARK`, innermost last.
    marks: Vec<usize>,
    memo: HashMap<u32, Entry>,
}

/// The pickle's bytes, read from the front.
struct Bytes<'a> {
    rest: &'a [u8],
}

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }

    fn u64_len(&mut self) -> Option<usize> {
        usize::try_from(u64::from_le_bytes(self.array()?)).ok()
    }

    /// A line ending in `\n`, without it (the text of `GLOBAL`).
    fn line(&mut self) -> Option<&'a str> {
        let end = memchr::memchr(b'\n', self.rest)?;
        let line = self.take(end + 1)?;
        std::str::from_utf8(&line[..end]).ok()
    }

    fn text(&mut self, len: usize) -> Option<Value> {
        let bytes = self.take(len)?;
        Some(Value::Str(Rc::from(std::str::from_utf8(bytes).ok()?)))
    }
}

/// A little-endian two's-complement int of `LONG1`, or [`Value::Other`] beyond 64 bits.
fn long(bytes: &[u8]) -> Value {
    let negative = bytes.last().is_some_and(|b| b & 0x80 != 0);
    let fill = if negative { 0xff } else { 0x00 };
    let fits = bytes.len() <= 8 || (bytes[8..].iter().all(|&b| b == fill) && (bytes[7] & 0x80 != 0) == negative);
    if !fits {
        return Value::Other;
    }
    let mut buf = [fill; 8];
    let len = bytes.len().min(8);
    buf[..len].copy_from_slice(&bytes[..len]);
    Value::Int(i64::from_le_bytes(buf))
}

impl Machine {
    fn run(mut self, pickle: &[u8]) -> Option<Value> {
        let mut r = Bytes { rest: pickle };
        loop {
            let op = r.u8()?;
            match op {
                // PROTO, FRAME
                0x80 => {
                    if r.u8()? > 5 {
                        return None;
                    }
                }
                0x95 => {
                    r.take(8)?;
                }
                // STOP
                b'.' => break,
                // NONE, NEWTRUE, NEWFALSE
                b'N' => self.stack.push(Entry::scalar(Value::None)),
                0x88 | 0x89 => self.stack.push(Entry::scalar(Value::Other)),
                // BININT, BININT1, BININT2, LONG1, BINFLOAT
                b'J' => {
                    let v = i32::from_le_bytes(r.array()?);
                    self.stack.push(Entry::scalar(Value::Int(v.into())));
                }
                b'K' => {
                    let v = r.u8()?;
                    self.stack.push(Entry::scalar(Value::Int(v.into())));
                }
                b'M' => {
                    let v = u16::from_le_bytes(r.array()?);
                    self.stack.push(Entry::scalar(Value::Int(v.into())));
                }
                0x8a => {
                    let len = r.u8()?;
                    let bytes = r.take(len.into())?;
                    self.stack.push(Entry::scalar(long(bytes)));
                }
                b'G' => {
                    r.take(8)?;
                    self.stack.push(Entry::scalar(Value::Other));
                }
                // SHORT_BINUNICODE, BINUNICODE, BINUNICODE8
                0x8c => {
                    let len = r.u8()?;
                    let value = r.text(len.into())?;
                    self.stack.push(Entry::scalar(value));
                }
                b'X' => {
                    let len = usize::try_from(r.u32()?).ok()?;
                    let value = r.text(len)?;
                    self.stack.push(Entry::scalar(value));
                }
                0x8d => {
                    let len = r.u64_len()?;
                    let value = r.text(len)?;
                    self.stack.push(Entry::scalar(value));
                }
                // SHORT_BINBYTES, BINBYTES, BINBYTES8, BYTEARRAY8
                b'C' => {
                    let len = r.u8()?;
                    r.take(len.into())?;
                    self.stack.push(Entry::scalar(Value::Other));
                }
                b'B' => {
                    let len = usize::try_from(r.u32()?).ok()?;
                    r.take(len)?;
                    self.stack.push(Entry::scalar(Value::Other));
                }
                0x8e | 0x96 => {
                    let len = r.u64_len()?;
                    r.take(len)?;
                    self.stack.push(Entry::scalar(Value::Other));
                }
                // MARK, EMPTY_TUPLE, EMPTY_LIST, EMPTY_SET, EMPTY_DICT
                b'(' => self.marks.push(self.stack.len()),
                b')' => self.stack.push(Entry::scalar(Value::Tuple(Rc::default()))),
                b']' | 0x8f => self.stack.push(Entry::scalar(Value::List(Rc::default()))),
                b'}' => self.stack.push(Entry::scalar(Value::Dict(Rc::default()))),
                // TUPLE, TUPLE1, TUPLE2, TUPLE3, LIST, FROZENSET
                b't' => {
                    let (items, depth) = self.pop_to_mark()?;
                    self.push(Value::Tuple(Rc::new(items)), depth + 1)?;
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let at = self.stack.len().checked_sub(n)?;
                    if self.marks.last().is_some_and(|&m| m > at) {
                        return None;
                    }
                    let entries = self.stack.split_off(at);
                    let depth = entries.iter().map(|e| e.depth).max().unwrap_or(0);
                    let items = entries.into_iter().map(|e| e.value).collect();
                    self.push(Value::Tuple(Rc::new(items)), depth + 1)?;
                }
                b'l' | 0x91 => {
                    let (items, depth) = self.pop_to_mark()?;
                    self.push(Value::List(Rc::new(items)), depth + 1)?;
                }
                // APPEND, APPENDS, ADDITEMS
                b'a' => {
                    let item = self.pop()?;
                    self.append(vec![item.value], item.depth)?;
                }
                b'e' | 0x90 => {
                    let (items, depth) = self.pop_to_mark()?;
                    self.append(items, depth)?;
                }
                // DICT, SETITEM, SETITEMS
                b'd' => {
                    let (items, depth) = self.pop_to_mark()?;
                    let mut map = HashMap::new();
                    insert_pairs(&mut map, items)?;
                    self.push(Value::Dict(Rc::new(map)), depth + 1)?;
                }
                b's' => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    self.set_items(vec![key.value, value.value], key.depth.max(value.depth))?;
                }
                b'u' => {
                    let (items, depth) = self.pop_to_mark()?;
                    self.set_items(items, depth)?;
                }
                // POP, POP_MARK, DUP
                b'0' => {
                    if self.mark_on_top() {
                        self.marks.pop();
                    } else {
                        self.pop()?;
                    }
                }
                b'1' => {
                    self.pop_to_mark()?;
                }
                b'2' => {
                    let top = self.top()?.clone();
                    self.stack.push(top);
                }
                // BINGET, LONG_BINGET
                b'h' => {
                    let idx = r.u8()?;
                    self.stack.push(self.memo.get(&idx.into())?.clone());
                }
                b'j' => {
                    let idx = r.u32()?;
                    self.stack.push(self.memo.get(&idx)?.clone());
                }
                // BINPUT, LONG_BINPUT, MEMOIZE
                b'q' => {
                    let idx = r.u8()?;
                    self.memo_put(idx.into())?;
                }
                b'r' => {
                    let idx = r.u32()?;
                    self.memo_put(idx)?;
                }
                0x94 => {
                    let idx = u32::try_from(self.memo.len()).ok()?;
                    self.memo_put(idx)?;
                }
                // GLOBAL, STACK_GLOBAL
                b'c' => {
                    let module = r.line()?.to_owned();
                    let name = r.line()?.to_owned();
                    self.stack.push(Entry::scalar(Value::Global(Rc::new((module, name)))));
                }
                0x93 => {
                    let name = self.pop()?.value;
                    let module = self.pop()?.value;
                    let (Value::Str(module), Value::Str(name)) = (module, name) else {
                        return None;
                    };
                    let global = Value::Global(Rc::new((module.to_string(), name.to_string())));
                    self.stack.push(Entry::scalar(global));
                }
                // BINPERSID
                b'Q' => {
                    let pid = self.pop()?.value;
                    self.stack.push(Entry::scalar(storage(&pid)?));
                }
                // REDUCE
                b'R' => {
                    let args = self.pop()?;
                    let callable = self.pop()?.value;
                    let value = reduce(&callable, args.value)?;
                    self.push(value, args.depth)?;
                }
                // NEWOBJ, NEWOBJ_EX: objects this machine does not build
                0x81 => {
                    let args = self.pop()?.value;
                    let class = self.pop()?.value;
                    self.stack.push(Entry::scalar(opaque(&[&class, &args])?));
                }
                0x92 => {
                    let kwargs = self.pop()?.value;
                    let args = self.pop()?.value;
                    let class = self.pop()?.value;
                    self.stack.push(Entry::scalar(opaque(&[&class, &args, &kwargs])?));
                }
                b'b' => self.build()?,
                // Text opcodes of protocols 0 and 1, persistent ids as text, extensions, out-of-band buffers:
                // not what torch.save writes.
                _ => return None,
            }
        }
        self.pop().map(|entry| entry.value)
    }

    fn push(&mut self, value: Value, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.stack.push(Entry {
            value,
            depth,
            memo: None,
        });
        Some(())
    }

    fn mark_on_top(&self) -> bool {
        self.marks.last() == Some(&self.stack.len())
    }

    fn pop(&mut self) -> Option<Entry> {
        if self.mark_on_top() {
            return None;
        }
        self.stack.pop()
    }

    fn top(&self) -> Option<&Entry> {
        if self.mark_on_top() {
            return None;
        }
        self.stack.last()
    }

    fn top_mut(&mut self) -> Option<&mut Entry> {
        if self.mark_on_top() {
            return None;
        }
        self.stack.last_mut()
    }

    fn pop_to_mark(&mut self) -> Option<(Vec<Value>, u32)> {
        let mark = self.marks.pop()?;
        let entries = self.stack.split_off(mark.min(self.stack.len()));
        let depth = entries.iter().map(|e| e.depth).max().unwrap_or(0);
        Some((entries.into_iter().map(|e| e.value).collect(), depth))
    }

    fn memo_put(&mut self, idx: u32) -> Option<()> {
        if self.memo.len() >= MAX_MEMO && !self.memo.contains_key(&idx) {
            return None;
        }
        let top = self.top_mut()?;
        top.memo = Some(idx);
        let entry = top.clone();
        self.memo.insert(idx, entry);
        Some(())
    }

    fn append(&mut self, items: Vec<Value>, items_depth: u32) -> Option<()> {
        let top = self.top_mut()?;
        let Value::List(list) = &mut top.value else {
            return None;
        };
        // A copy when the memo holds this list too: the memo keeps the list as it was stored.
        Rc::make_mut(list).extend(items);
        top.depth = top.depth.max(items_depth + 1);
        (top.depth <= MAX_DEPTH).then_some(())
    }

    fn set_items(&mut self, items: Vec<Value>, items_depth: u32) -> Option<()> {
        let top = self.top_mut()?;
        let Value::Dict(map) = &mut top.value else {
            return None;
        };
        insert_pairs(Rc::make_mut(map), items)?;
        top.depth = top.depth.max(items_depth + 1);
        (top.depth <= MAX_DEPTH).then_some(())
    }

    /// `BUILD`: a dict takes a dict state's items; an object stays opaque, but for a pickled `nn.Module` (a
    /// full-model save), marked as one.
    fn build(&mut self) -> Option<()> {
        let state = self.pop()?;
        let object = self.pop()?;
        let memo = object.memo;
        let (built, depth) = match (object.value, state.value) {
            (Value::Dict(mut map), Value::Dict(update)) => {
                Rc::make_mut(&mut map).extend(update.iter().map(|(k, v)| (k.clone(), v.clone())));
                (Value::Dict(map), object.depth.max(state.depth))
            }
            (dict @ Value::Dict(_), state) => {
                if state.holds_tensor_data() {
                    return None;
                }
                (dict, object.depth)
            }
            (Value::Other, Value::Dict(attrs)) if is_module_state(&attrs) => (Value::Module, state.depth),
            (object, state) => (opaque(&[&object, &state])?, 0),
        };
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(idx) = memo {
            self.memo.insert(
                idx,
                Entry {
                    value: built.clone(),
                    depth,
                    memo: Some(idx),
                },
            );
        }
        self.push(built, depth)
    }
}

/// Dict items in pairs, later keys replacing earlier ones; keys are strs or ints (as decimal strings).
fn insert_pairs(map: &mut HashMap<String, Value>, items: Vec<Value>) -> Option<()> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    let mut items = items.into_iter();
    while let (Some(key), Some(value)) = (items.next(), items.next()) {
        map.insert(key.key()?, value);
    }
    Some(())
}

/// Whether a `BUILD` state is an `nn.Module`'s `__dict__`.
fn is_module_state(attrs: &HashMap<String, Value>) -> bool {
    ["_parameters", "_buffers", "_modules"]
        .iter()
        .all(|table| matches!(attrs.get(*table), Some(Value::Dict(_))))
}

/// An object this machine does not build, which must not hold a tensor (pytorch-reader refuses those).
fn opaque(parts: &[&Value]) -> Option<Value> {
    if parts.iter().any(|part| part.holds_tensor_data()) {
        return None;
    }
    Some(Value::Other)
}

/// The storage of a persistent id `('storage', FloatStorage, key, location, numel)`; a view of a storage (a
/// sixth field, written only by old legacy files) or an untyped storage is left to pytorch-reader.
fn storage(pid: &Value) -> Option<Value> {
    let Value::Tuple(fields) = pid else {
        return None;
    };
    let [tag, storage_type, key, _location, len, view @ ..] = fields.as_slice() else {
        return None;
    };
    if !matches!(tag, Value::Str(tag) if &**tag == "storage") || !matches!(view, [] | [Value::None]) {
        return None;
    }
    let type_name = match storage_type {
        Value::Global(global) => global.1.as_str(),
        Value::Str(name) => name,
        _ => return None,
    };
    let dtype = match type_name {
        "FloatStorage" => DType::F32,
        "DoubleStorage" => DType::F64,
        "HalfStorage" => DType::F16,
        "BFloat16Storage" => DType::BF16,
        "LongStorage" => DType::I64,
        "IntStorage" => DType::I32,
        "ShortStorage" => DType::I16,
        "CharStorage" => DType::I8,
        "ByteStorage" => DType::U8,
        "BoolStorage" => DType::Bool,
        _ => return None,
    };
    let len = len.non_negative()?;
    len.checked_mul(dtype.size())?;
    Some(Value::Storage(Rc::new(Storage {
        key: key.key()?,
        dtype,
        len,
    })))
}

/// `REDUCE`: the calls `torch.save` writes for tensors, parameters and ordered dicts; any other call is an
/// opaque object.
fn reduce(callable: &Value, args: Value) -> Option<Value> {
    let Value::Global(global) = callable else {
        return opaque(&[callable, &args]);
    };
    match (global.0.as_str(), global.1.as_str()) {
        ("collections", "OrderedDict") => {
            let mut map = HashMap::new();
            for pair in sequence_arg(&args)? {
                match pair.items()? {
                    [key, value] => map.insert(key.key()?, value.clone()),
                    _ => return None,
                };
            }
            Some(Value::Dict(Rc::new(map)))
        }
        ("builtins" | "__builtin__", "set" | "frozenset") => Some(Value::List(Rc::new(sequence_arg(&args)?.to_vec()))),
        ("torch._utils", "_rebuild_tensor") => rebuild_tensor(&args, 4),
        ("torch._utils", "_rebuild_tensor_v2") => rebuild_tensor(&args, 6),
        ("torch._utils", "_rebuild_parameter" | "_rebuild_parameter_with_state") => {
            let Value::Tuple(fields) = &args else {
                return None;
            };
            let (data, rest) = fields.split_first()?;
            if rest.iter().any(Value::holds_tensor_data) {
                return None;
            }
            Some(data.clone())
        }
        // Tensors of other kinds (`_rebuild_tensor_v3`'s dtypes, subclasses, sparse, quantized) are left to
        // pytorch-reader.
        ("torch._utils" | "torch._tensor", _) if args.holds_tensor_data() => None,
        _ => opaque(&[callable, &args]),
    }
}

/// The items of a call taking one sequence: `f()` or `f(items)`.
fn sequence_arg(args: &Value) -> Option<&[Value]> {
    let Value::Tuple(fields) = args else {
        return None;
    };
    match fields.as_slice() {
        [] => Some(&[]),
        [items] => items.items(),
        _ => None,
    }
}

/// `_rebuild_tensor(storage, offset, size, stride)`, `_rebuild_tensor_v2(…, requires_grad, hooks[, metadata])`.
fn rebuild_tensor(args: &Value, arity: usize) -> Option<Value> {
    let Value::Tuple(fields) = args else {
        return None;
    };
    if fields.len() < arity {
        return None;
    }
    let Value::Storage(storage) = &fields[0] else {
        return None;
    };
    let dims = |value: &Value| -> Option<Vec<usize>> { value.items()?.iter().map(Value::non_negative).collect() };
    Some(Value::Tensor(Rc::new(Layout {
        storage: storage.key.clone(),
        dtype: storage.dtype,
        storage_len: storage.len,
        offset: fields[1].non_negative()?,
        shape: dims(&fields[2])?,
        stride: dims(&fields[3])?,
    })))
}

/// The walk that names each tensor by its path, as pytorch-reader does.
#[derive(Default)]
struct Names {
    found: HashMap<String, Layout>,
    visits: usize,
}

impl Names {
    fn walk(&mut self, value: &Value, path: &mut Vec<String>, depth: u32) -> Option<()> {
        self.visits += 1;
        if self.visits > MAX_VISITS || depth > MAX_DEPTH {
            return None;
        }
        match value {
            Value::Dict(map) => {
                for (key, value) in map.iter() {
                    path.push(key.clone());
                    self.walk(value, path, depth + 1)?;
                    path.pop();
                }
            }
            Value::List(items) | Value::Tuple(items) => {
                for (index, item) in items.iter().enumerate() {
                    path.push(index.to_string());
                    self.walk(item, path, depth + 1)?;
                    path.pop();
                }
            }
            // pytorch-reader keeps one of two tensors that get one name, whichever its hash map gives last: such a
            // pickle is left to it.
            Value::Tensor(layout) => {
                return self
                    .found
                    .insert(path.join("."), (**layout).clone())
                    .is_none()
                    .then_some(());
            }
            // A pickled module's tensors are left to pytorch-reader.
            Value::Module => return None,
            _ => {}
        }
        Some(())
    }
}
