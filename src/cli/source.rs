//! Where a matrix comes from: a Matrix Market file or a seeded generator.

use super::progress::Step;
use spgemm::mtx::ReadOptions;
use spgemm::{generate, CsrMatrix, Scalar};
use spgemm_core::Error;
use std::path::PathBuf;

/// A matrix to load: a file path, or `gen:` followed by a generator spec.
#[derive(Clone, Debug, PartialEq)]
pub enum MatrixSource {
    /// A `.mtx`, `.mtx.gz` or `.npz` file.
    File(PathBuf),
    /// A synthetic matrix.
    Gen(Gen),
}

/// Synthetic families of `spgemm_core::generate`.
#[derive(Clone, Debug, PartialEq)]
pub enum Gen {
    /// 3D stencil on an n³ grid with 7 or 27 points.
    Stencil { points: usize, n: usize },
    /// R-MAT with 2^scale vertices, quadrant probabilities (a, b, c).
    Rmat {
        scale: u32,
        edge_factor: usize,
        abc: Option<(f64, f64, f64)>,
    },
    /// `dof` unknowns per node of an n³ grid, 27-point coupling.
    Fem { n: usize, dof: usize },
    /// 7-point Poisson matrix on an n³ grid.
    Poisson { n: usize },
    /// Its smoothed-aggregation prolongator P, or Pᵀ.
    Prolongator { n: usize, transposed: bool },
    /// Erdős–Rényi with `per_row` entries a row.
    Er { rows: usize, per_row: usize },
    /// Short rows plus a few long rows.
    LongRows {
        rows: usize,
        short: usize,
        nlong: usize,
        long: usize,
    },
}

impl std::str::FromStr for MatrixSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let Some(spec) = s.strip_prefix("gen:") else {
            return Ok(Self::File(PathBuf::from(s)));
        };
        let parts: Vec<&str> = spec.split(':').collect();
        let num = |i: usize| -> Result<usize, String> {
            parts
                .get(i)
                .ok_or_else(|| format!("'{s}': missing argument {i}"))?
                .parse()
                .map_err(|_| format!("'{s}': argument {i} is not a number"))
        };
        let want = |n: usize| {
            if parts.len() == n + 1 {
                Ok(())
            } else {
                Err(format!("'{s}': {} takes {n} numbers", parts[0]))
            }
        };
        let g = match parts[0] {
            "stencil7" | "stencil27" => {
                want(1)?;
                Gen::Stencil { points: if parts[0] == "stencil7" { 7 } else { 27 }, n: num(1)? }
            }
            "rmat" => {
                let abc = if parts.len() == 6 {
                    let p = |i: usize| parts[i].parse::<f64>().map_err(|_| format!("'{s}': probability {i} is not a number"));
                    Some((p(3)?, p(4)?, p(5)?))
                } else {
                    want(2)?;
                    None
                };
                Gen::Rmat { scale: num(1)? as u32, edge_factor: num(2)?, abc }
            }
            "fem27" => {
                want(2)?;
                Gen::Fem { n: num(1)?, dof: num(2)? }
            }
            "poisson7" => {
                want(1)?;
                Gen::Poisson { n: num(1)? }
            }
            "sa-p" | "sa-pt" => {
                want(1)?;
                Gen::Prolongator { n: num(1)?, transposed: parts[0] == "sa-pt" }
            }
            "er" => {
                want(2)?;
                Gen::Er { rows: num(1)?, per_row: num(2)? }
            }
            "longrows" => {
                want(4)?;
                Gen::LongRows { rows: num(1)?, short: num(2)?, nlong: num(3)?, long: num(4)? }
            }
            other => {
                return Err(format!(
                    "unknown generator '{other}' (stencil7:N, stencil27:N, fem27:N:DOF, poisson7:N, sa-p:N, sa-pt:N, rmat:SCALE:EF[:A:B:C], er:ROWS:PER_ROW, longrows:ROWS:SHORT:NLONG:LONG)"
                ))
            }
        };
        Ok(Self::Gen(g))
    }
}

impl MatrixSource {
    /// A short name for reports: the file name, or the generator spec.
    pub fn name(&self) -> String {
        match self {
            Self::File(p) => p.file_name().map_or_else(
                || p.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            ),
            Self::Gen(g) => match g {
                Gen::Stencil { points, n } => format!("stencil{points}:{n}"),
                Gen::Rmat {
                    scale,
                    edge_factor,
                    abc: None,
                } => format!("rmat:{scale}:{edge_factor}"),
                Gen::Rmat {
                    scale,
                    edge_factor,
                    abc: Some((a, b, c)),
                } => {
                    format!("rmat:{scale}:{edge_factor}:{a}:{b}:{c}")
                }
                Gen::Fem { n, dof } => format!("fem27:{n}:{dof}"),
                Gen::Poisson { n } => format!("poisson7:{n}"),
                Gen::Prolongator { n, transposed } => {
                    format!("sa-p{}:{n}", if *transposed { "t" } else { "" })
                }
                Gen::Er { rows, per_row } => format!("er:{rows}:{per_row}"),
                Gen::LongRows {
                    rows,
                    short,
                    nlong,
                    long,
                } => format!("longrows:{rows}:{short}:{nlong}:{long}"),
            },
        }
    }

    /// Reads or generates the matrix (with a progress bar when reading
    /// takes over a second).
    pub fn load<T: Scalar>(&self, seed: u64) -> Result<CsrMatrix<T>, Error> {
        match self {
            Self::File(p) => {
                let total = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
                let step = Step::new(format!("reading {}", self.name()), Some(total), true);
                let report = |done: u64| step.set(done);
                let opts = ReadOptions {
                    chunk_bytes: None,
                    progress: Some(&report),
                };
                spgemm::files::read(p, &opts)
            }
            Self::Gen(g) => match *g {
                Gen::Stencil { points, n } => generate::stencil_3d(n, points, seed),
                Gen::Rmat {
                    scale,
                    edge_factor,
                    abc,
                } => {
                    generate::rmat_with(scale, edge_factor, abc.unwrap_or(generate::GRAPH500), seed)
                }
                Gen::Fem { n, dof } => generate::fem_27(n, dof, seed),
                Gen::Poisson { n } => generate::poisson_7(n),
                Gen::Prolongator {
                    n,
                    transposed: false,
                } => generate::sa_prolongator(n),
                Gen::Prolongator {
                    n,
                    transposed: true,
                } => generate::sa_prolongator(n)?.transpose(),
                Gen::Er { rows, per_row } => generate::erdos_renyi(rows, per_row, seed),
                Gen::LongRows {
                    rows,
                    short,
                    nlong,
                    long,
                } => generate::short_and_long_rows(rows, short, nlong, long, seed),
            },
        }
    }
}

/// A, B when it is not A, and the product's name.
pub type Loaded<T> = (CsrMatrix<T>, Option<CsrMatrix<T>>, &'static str);

/// The operands of one benchmarked product: `A` alone (C = A·A, or A·Aᵀ
/// when A is rectangular) or `A+B` (C = A·B).
#[derive(Clone, Debug, PartialEq)]
pub struct Operands {
    /// A.
    pub a: MatrixSource,
    /// B, when given.
    pub b: Option<MatrixSource>,
}

impl std::str::FromStr for Operands {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once('+') {
            Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok(Self {
                a: a.parse()?,
                b: Some(b.parse()?),
            }),
            Some(_) => Err(format!("'{s}': A+B needs both matrices")),
            None => Ok(Self {
                a: s.parse()?,
                b: None,
            }),
        }
    }
}

impl Operands {
    /// `A` or `A+B`, by the sources' names.
    pub fn name(&self) -> String {
        match &self.b {
            Some(b) => format!("{}+{}", self.a.name(), b.name()),
            None => self.a.name(),
        }
    }

    /// Loads A and B (B: the given one, else A for square A, else Aᵀ) and
    /// names the product computed (`A·B`, `A·A` or `A·Aᵀ`).
    ///
    /// # Errors
    /// Reading or generating either matrix; [`Error::DimensionMismatch`]
    /// when B's rows differ from A's columns.
    pub fn load<T: Scalar>(&self, seed: u64) -> Result<Loaded<T>, Error> {
        let a = self.a.load::<T>(seed)?;
        match &self.b {
            Some(src) => {
                let b = src.load::<T>(seed)?;
                spgemm::reference::check_dimensions(a.shape(), b.shape())?;
                Ok((a, Some(b), "A·B"))
            }
            None if a.nrows() == a.ncols() => Ok((a, None, "A·A")),
            None => {
                let at = a.transpose()?;
                Ok((a, Some(at), "A·Aᵀ"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sources() {
        assert_eq!(
            "a.mtx".parse::<MatrixSource>().unwrap(),
            MatrixSource::File("a.mtx".into())
        );
        assert_eq!(
            "gen:rmat:18:16".parse::<MatrixSource>().unwrap(),
            MatrixSource::Gen(Gen::Rmat {
                scale: 18,
                edge_factor: 16,
                abc: None
            })
        );
        assert!("gen:rmat:18".parse::<MatrixSource>().is_err());
        let p: Operands = "a.mtx+gen:er:10:2".parse().unwrap();
        assert_eq!(p.name(), "a.mtx+er:10:2");
        assert!("a.mtx+".parse::<Operands>().is_err());
        assert!("gen:blob:1".parse::<MatrixSource>().is_err());
        assert_eq!(
            "gen:longrows:10:2:1:5"
                .parse::<MatrixSource>()
                .unwrap()
                .name(),
            "longrows:10:2:1:5"
        );
    }
}
