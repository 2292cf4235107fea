//! Parser for DiskSim 4.0 parameter files (`.parv`, `.diskspecs`, `.model`).
//!
//! Syntax: `name = value` pairs separated by commas inside `type [Name] { ... }`
//! blocks; values are words (numbers or bare strings), `[ ... ]` lists (commas
//! optional), nested blocks, or `source FILE` (the single block that FILE
//! holds). At top level: blocks, `source FILE` (splices FILE's items in),
//! `instantiate [ names ] as Type`, and `topology type name [ ... ]`. `#`
//! starts a comment. Included paths are relative to the including file.
//! Every value keeps the file and line it came from.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a token came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    /// The file, as named where it was included.
    pub file: Arc<str>,
    /// Line number, from 1.
    pub line: usize,
}

impl Loc {
    /// A parse error at this location.
    pub fn err(&self, msg: impl Into<String>) -> Error {
        Error::Parse { path: self.file.to_string(), line: self.line, msg: msg.into() }
    }
}

#[derive(Clone, Debug)]
/// A parameter's value.
pub enum Value {
    /// A number or bare word, as written.
    Word(String),
    /// A `[ ... ]` list.
    List(Vec<Node>),
    /// A nested block (or the block a `source FILE` value holds).
    Block(Block),
}

#[derive(Clone, Debug)]
/// A value with where it was written.
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where it was written.
    pub loc: Loc,
}

#[derive(Clone, Debug)]
/// One `name = value` pair of a block.
pub struct Param {
    /// Parameter name, as written.
    pub name: String,
    /// Its value.
    pub value: Node,
    /// Where the name was written.
    pub loc: Loc,
}

#[derive(Clone, Debug)]
/// A `type [Name] { ... }` block.
pub struct Block {
    /// The block's type.
    pub type_name: String,
    /// The block's name, if given.
    pub name: Option<String>,
    /// Its parameters, in file order.
    pub params: Vec<Param>,
    /// Where the block starts.
    pub loc: Loc,
}

/// `topology type name [ children ]`.
#[derive(Clone, Debug)]
pub struct TopoNode {
    /// Component type.
    pub type_name: String,
    /// Component name.
    pub name: String,
    /// Components attached below it.
    pub children: Vec<TopoNode>,
    /// Where the node was written.
    pub loc: Loc,
}

/// Everything at the top level of a file, with `source`d files spliced in.
#[derive(Clone, Debug, Default)]
pub struct ParamFile {
    /// Top-level blocks, in file order.
    pub blocks: Vec<Block>,
    /// (instance names, block name they instantiate).
    pub instances: Vec<(Vec<String>, String, Loc)>,
    /// `topology` declarations.
    pub topology: Vec<TopoNode>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Eq,
    Comma,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    file: Arc<str>,
    dir: PathBuf,
    /// Line of the last token, for "unexpected end of file".
    last_line: usize,
    /// `source` includes above this file.
    depth: usize,
    /// Lists, blocks and topology nodes open at this point: bounded so that a
    /// hostile file cannot overflow the stack.
    nest: usize,
}

fn lex(text: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.split('#').next().unwrap_or("");
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut Vec<(Tok, usize)>| {
            if !word.is_empty() {
                out.push((Tok::Word(std::mem::take(word)), line_no));
            }
        };
        for ch in line.chars() {
            let t = match ch {
                '=' => Some(Tok::Eq),
                ',' => Some(Tok::Comma),
                '[' => Some(Tok::LBracket),
                ']' => Some(Tok::RBracket),
                '{' => Some(Tok::LBrace),
                '}' => Some(Tok::RBrace),
                c if c.is_whitespace() => {
                    flush(&mut word, &mut out);
                    None
                }
                c => {
                    word.push(c);
                    None
                }
            };
            if let Some(t) = t {
                flush(&mut word, &mut out);
                out.push((t, line_no));
            }
        }
        flush(&mut word, &mut out);
    }
    out
}

/// Parse a parameter file and everything it `source`s.
pub fn parse_file(path: &Path) -> Result<ParamFile> {
    parse_file_at(path, 0)
}

const MAX_DEPTH: usize = 16;
/// Deepest nesting of `[`, blocks and topology nodes; DiskSim's files use 4.
const MAX_NEST: usize = 64;

fn read(path: &Path) -> Result<String> {
    let file_err = |msg: String| Error::File { path: path.display().to_string(), msg };
    let bytes = crate::budget::read_text_file(path, "DiskSim parameter file")?;
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        file_err(format!("line {line}, column {col}: not valid UTF-8 text (a DiskSim parameter file is plain text)"))
    })
}

fn parse_file_at(path: &Path, depth: usize) -> Result<ParamFile> {
    let text = read(path)?;
    let mut p = Parser::new(&text, path, depth);
    let mut out = ParamFile::default();
    p.top(&mut out)?;
    Ok(out)
}

/// Parse text as if it were the file `path` (includes resolve relative to it).
pub fn parse_str(text: &str, path: &Path) -> Result<ParamFile> {
    let mut p = Parser::new(text, path, 0);
    let mut out = ParamFile::default();
    p.top(&mut out)?;
    Ok(out)
}

impl Parser {
    fn new(text: &str, path: &Path, depth: usize) -> Parser {
        Parser {
            toks: lex(text),
            pos: 0,
            file: Arc::from(path.display().to_string()),
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            last_line: text.lines().count().max(1),
            depth,
            nest: 0,
        }
    }

    /// Runs `f` one nesting level deeper, refusing past `MAX_NEST`.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Parser) -> Result<T>) -> Result<T> {
        if self.nest >= MAX_NEST {
            return Err(self.loc().err(format!("`[`, blocks or topology nested more than {MAX_NEST} deep")));
        }
        self.nest += 1;
        let r = f(self);
        self.nest -= 1;
        r
    }

    fn loc(&self) -> Loc {
        let line = self.toks.get(self.pos).map_or(self.last_line, |t| t.1);
        Loc { file: self.file.clone(), line }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn peek2(&self) -> Option<&Tok> {
        self.toks.get(self.pos + 1).map(|t| &t.0)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.0.clone());
        self.pos += 1;
        t
    }

    fn expect(&mut self, want: Tok, what: &str) -> Result<()> {
        let loc = self.loc();
        match self.next() {
            Some(t) if t == want => Ok(()),
            Some(t) => Err(loc.err(format!("expected {what}, found {}", show(&t)))),
            None => Err(loc.err(format!("expected {what}, found end of file"))),
        }
    }

    fn word(&mut self, what: &str) -> Result<String> {
        let loc = self.loc();
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            Some(t) => Err(loc.err(format!("expected {what}, found {}", show(&t)))),
            None => Err(loc.err(format!("expected {what}, found end of file"))),
        }
    }

    fn include(&self, name: &str, loc: &Loc) -> Result<ParamFile> {
        if self.depth >= MAX_DEPTH {
            return Err(loc.err(format!("`source {name}`: includes nested more than {MAX_DEPTH} deep")));
        }
        let path = self.dir.join(name);
        if !path.is_file() {
            return Err(loc.err(format!("`source {name}`: no such file {}", path.display())));
        }
        parse_file_at(&path, self.depth + 1)
    }

    fn top(&mut self, out: &mut ParamFile) -> Result<()> {
        while let Some(t) = self.peek().cloned() {
            let loc = self.loc();
            let Tok::Word(w) = t else {
                return Err(loc.err(format!("expected a block, `source`, `instantiate` or `topology`, found {}", show(&t))));
            };
            match w.as_str() {
                "source" => {
                    self.pos += 1;
                    let name = self.word("a file name after `source`")?;
                    let inc = self.include(&name, &loc)?;
                    out.blocks.extend(inc.blocks);
                    out.instances.extend(inc.instances);
                    out.topology.extend(inc.topology);
                }
                "instantiate" => {
                    self.pos += 1;
                    let names = self.list()?
                        .into_iter()
                        .map(|n| match n.value {
                            Value::Word(w) => Ok(w),
                            _ => Err(n.loc.err("`instantiate` lists instance names")),
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let as_loc = self.loc();
                    if self.word("`as`")? != "as" {
                        return Err(as_loc.err("expected `as` after the instance list"));
                    }
                    let ty = self.word("the name of the block to instantiate")?;
                    out.instances.push((names, ty, loc));
                }
                "topology" => {
                    self.pos += 1;
                    out.topology.push(self.topo_node()?);
                }
                _ => {
                    let b = self.block_header_and_body()?;
                    out.blocks.push(b);
                    // Stray commas between top-level blocks are harmless.
                    while self.peek() == Some(&Tok::Comma) {
                        self.pos += 1;
                    }
                }
            }
        }
        Ok(())
    }

    fn topo_node(&mut self) -> Result<TopoNode> {
        let loc = self.loc();
        let type_name = self.word("a component type")?;
        let name = self.word("a component name")?;
        self.expect(Tok::LBracket, "`[`")?;
        let mut children = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::RBracket) => {
                    self.pos += 1;
                    break;
                }
                Some(Tok::Comma) => self.pos += 1,
                None => return Err(self.loc().err(format!("unclosed `[` of topology node {name} (line {})", loc.line))),
                _ => children.push(self.nested(Parser::topo_node)?),
            }
        }
        Ok(TopoNode { type_name, name, children, loc })
    }

    /// `type [name] { params }`, starting at `type`.
    fn block_header_and_body(&mut self) -> Result<Block> {
        let loc = self.loc();
        let type_name = self.word("a block type")?;
        let name = match self.peek() {
            Some(Tok::LBrace) => None,
            Some(Tok::Word(_)) => Some(self.word("a block name")?),
            _ => None,
        };
        if self.peek() != Some(&Tok::LBrace) {
            let l = self.loc();
            let found = self.peek().map_or("end of file".to_string(), show);
            return Err(l.err(format!("expected `{{` to open block {type_name}, found {found}")));
        }
        self.pos += 1;
        let params = self.params(&type_name, &loc)?;
        Ok(Block { type_name, name, params, loc })
    }

    /// Parameters up to and including the closing `}`.
    fn params(&mut self, type_name: &str, open: &Loc) -> Result<Vec<Param>> {
        let mut params = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::RBrace) => {
                    self.pos += 1;
                    return Ok(params);
                }
                Some(Tok::Comma) => {
                    self.pos += 1;
                }
                None => return Err(self.loc().err(format!("unbalanced braces: block {type_name} opened at line {} is never closed", open.line))),
                Some(Tok::Word(_)) => {
                    let loc = self.loc();
                    let mut words = Vec::new();
                    while let Some(Tok::Word(_)) = self.peek() {
                        // A parameter name never spans lines; a new line means a missing `=`.
                        if !words.is_empty() && self.toks[self.pos].1 != loc.line {
                            break;
                        }
                        words.push(self.word("a parameter name")?);
                    }
                    let name = words.join(" ");
                    if self.peek() != Some(&Tok::Eq) {
                        return Err(loc.err(format!("missing `=` after parameter `{name}` in block {type_name}")));
                    }
                    self.pos += 1;
                    let value = self.value()?;
                    params.push(Param { name, value, loc });
                    match self.peek() {
                        Some(Tok::Comma) | Some(Tok::RBrace) => {}
                        None => {}
                        Some(t) => {
                            let t = show(t);
                            return Err(self.loc().err(format!("expected `,` or `}}` after the value of `{}`, found {t}", params.last().unwrap().name)));
                        }
                    }
                }
                Some(t) => {
                    let t = show(t);
                    return Err(self.loc().err(format!("expected a parameter name in block {type_name}, found {t}")));
                }
            }
        }
    }

    fn value(&mut self) -> Result<Node> {
        let loc = self.loc();
        match self.peek().cloned() {
            Some(Tok::LBracket) => Ok(Node { value: Value::List(self.nested(Parser::list)?), loc }),
            Some(Tok::Word(w)) => {
                let next = self.peek2().cloned();
                if w == "source" && matches!(next, Some(Tok::Word(_))) {
                    self.pos += 1;
                    let name = self.word("a file name")?;
                    let inc = self.include(&name, &loc)?;
                    let mut blocks = inc.blocks;
                    if blocks.len() != 1 {
                        return Err(loc.err(format!("`source {name}` as a value must hold exactly one block, found {}", blocks.len())));
                    }
                    let b = blocks.pop().unwrap();
                    let bl = b.loc.clone();
                    return Ok(Node { value: Value::Block(b), loc: bl });
                }
                let named_block = matches!(next, Some(Tok::Word(_))) && matches!(self.toks.get(self.pos + 2).map(|t| &t.0), Some(Tok::LBrace));
                if next == Some(Tok::LBrace) || named_block {
                    return Ok(Node { value: Value::Block(self.nested(Parser::block_header_and_body)?), loc });
                }
                self.pos += 1;
                Ok(Node { value: Value::Word(w), loc })
            }
            Some(t) => Err(loc.err(format!("expected a value, found {}", show(&t)))),
            None => Err(loc.err("expected a value, found end of file")),
        }
    }

    /// `[ v, v, ... ]` (commas optional).
    fn list(&mut self) -> Result<Vec<Node>> {
        let open = self.loc();
        self.expect(Tok::LBracket, "`[`")?;
        let mut items = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::RBracket) => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(Tok::Comma) => self.pos += 1,
                None => return Err(self.loc().err(format!("unbalanced brackets: `[` opened at line {} is never closed", open.line))),
                Some(Tok::RBrace) => return Err(self.loc().err(format!("unbalanced brackets: `}}` inside the `[` opened at line {}", open.line))),
                _ => items.push(self.value()?),
            }
        }
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Eq => "`=`".into(),
        Tok::Comma => "`,`".into(),
        Tok::LBracket => "`[`".into(),
        Tok::RBracket => "`]`".into(),
        Tok::LBrace => "`{`".into(),
        Tok::RBrace => "`}`".into(),
    }
}

impl Node {
    /// A finite number; an error naming `what` and the location otherwise.
    pub fn as_f64(&self, what: &str) -> Result<f64> {
        match &self.value {
            Value::Word(w) => w.parse::<f64>().ok().filter(|v| v.is_finite())
                .ok_or_else(|| self.loc.err(format!("`{what}`: `{w}` is not a number"))),
            _ => Err(self.loc.err(format!("`{what}`: expected a number"))),
        }
    }

    /// A whole number written as an integer or as `N.0`.
    pub fn as_u64(&self, what: &str) -> Result<u64> {
        let v = self.as_f64(what)?;
        if v < 0.0 || v.fract() != 0.0 || v > 9.0e15 {
            return Err(self.loc.err(format!("`{what}`: {v} is not a whole number >= 0")));
        }
        Ok(v as u64)
    }

    /// A bare word; an error naming `what` and the location otherwise.
    pub fn as_word(&self, what: &str) -> Result<&str> {
        match &self.value {
            Value::Word(w) => Ok(w),
            _ => Err(self.loc.err(format!("`{what}`: expected a word"))),
        }
    }

    /// The nodes of a `[ ... ]` list; an error naming `what` and the location otherwise.
    pub fn as_list(&self, what: &str) -> Result<&[Node]> {
        match &self.value {
            Value::List(l) => Ok(l),
            _ => Err(self.loc.err(format!("`{what}`: expected a `[ ... ]` list"))),
        }
    }

    /// A nested block; an error naming `what` and the location otherwise.
    pub fn as_block(&self, what: &str) -> Result<&Block> {
        match &self.value {
            Value::Block(b) => Ok(b),
            _ => Err(self.loc.err(format!("`{what}`: expected a block"))),
        }
    }
}

impl Block {
    /// The parameter `name` (case-insensitive), if present.
    pub fn get(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The value of parameter `name`; an error naming the block if missing.
    pub fn req(&self, name: &str) -> Result<&Node> {
        self.get(name).map(|p| &p.value).ok_or_else(|| {
            self.loc.err(format!("block {} is missing `{name}`", self.display_name()))
        })
    }

    /// `type name`, or `type` for an unnamed block.
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(n) => format!("{} {n}", self.type_name),
            None => self.type_name.clone(),
        }
    }

    /// Reject parameters not in `known` and repeated parameters, naming file and line.
    pub fn check_known(&self, known: &[&str]) -> Result<()> {
        for (i, p) in self.params.iter().enumerate() {
            if !known.iter().any(|k| k.eq_ignore_ascii_case(&p.name)) {
                return Err(p.loc.err(format!("unknown parameter `{}` in {}", p.name, self.display_name())));
            }
            if self.params[..i].iter().any(|q| q.name.eq_ignore_ascii_case(&p.name)) {
                return Err(p.loc.err(format!("parameter `{}` given twice in {}", p.name, self.display_name())));
            }
        }
        Ok(())
    }
}
