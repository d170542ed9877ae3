//! The encoder's building blocks: checked tensor loading, dense layers and layer norm.

use std::collections::HashMap;

use super::math::{Mat, gemm};
use super::safetensors::Tensor;

/// The loaded tensors, taken out one by one with their shapes checked.
pub(super) struct Store {
    pub(super) tensors: HashMap<String, Tensor>,
    pub(super) h: usize,
    pub(super) eps: f32,
}

impl Store {
    /// A tensor by name (also under a `bert.` prefix) with exactly this shape.
    pub(super) fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let t = self
            .tensors
            .remove(name)
            .or_else(|| self.tensors.remove(&format!("bert.{name}")))
            .ok_or_else(|| format!("tensor {name} is missing"))?;
        if t.shape != shape {
            return Err(format!(
                "tensor {name} has shape {:?}, expected {shape:?}",
                t.shape
            ));
        }
        Ok(t.data)
    }

    pub(super) fn linear(
        &mut self,
        prefix: &str,
        inp: usize,
        out: usize,
    ) -> Result<Linear, String> {
        Ok(Linear {
            w: self.take(&format!("{prefix}.weight"), &[out, inp])?,
            b: self.take(&format!("{prefix}.bias"), &[out])?,
            inp,
            out,
        })
    }

    pub(super) fn norm(&mut self, prefix: &str) -> Result<LayerNorm, String> {
        Ok(LayerNorm {
            gamma: self.take(&format!("{prefix}.weight"), &[self.h])?,
            beta: self.take(&format!("{prefix}.bias"), &[self.h])?,
            eps: self.eps,
        })
    }
}

/// A dense layer, `y = x Wᵀ + b`, with `W` stored as PyTorch does (out × in).
pub(super) struct Linear {
    pub(super) w: Vec<f32>,
    pub(super) b: Vec<f32>,
    pub(super) inp: usize,
    pub(super) out: usize,
}

impl Linear {
    pub(super) fn apply(&self, x: &[f32], rows: usize) -> Vec<f32> {
        let mut y = vec![0.0f32; rows * self.out];
        let (k, n) = (self.inp, self.out);
        // y (rows × out) = x (rows × in) · Wᵀ, W stored out × in.
        gemm(
            (rows, k, n),
            Mat {
                data: x,
                rs: k,
                cs: 1,
            },
            Mat {
                data: &self.w,
                rs: 1,
                cs: k,
            },
            &mut y,
            (n, 1),
        );
        for row in y.chunks_exact_mut(self.out) {
            for (v, b) in row.iter_mut().zip(&self.b) {
                *v += b;
            }
        }
        y
    }
}

pub(super) struct LayerNorm {
    pub(super) gamma: Vec<f32>,
    pub(super) beta: Vec<f32>,
    pub(super) eps: f32,
}

impl LayerNorm {
    pub(super) fn apply(&self, x: &mut [f32]) {
        let n = self.gamma.len();
        for row in x.chunks_exact_mut(n) {
            let mean = row.iter().sum::<f32>() / n as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

pub(super) struct Layer {
    pub(super) query: Linear,
    pub(super) key: Linear,
    pub(super) value: Linear,
    pub(super) attn_out: Linear,
    pub(super) attn_norm: LayerNorm,
    pub(super) up: Linear,
    pub(super) down: Linear,
    pub(super) out_norm: LayerNorm,
}
