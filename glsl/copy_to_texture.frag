// Copy-to-texture (paper 000, section 6.1.1): BrookGPU on Linux rendered into a p-buffer and
// then copied the rendered fragments into the texture. Each fragment takes its own texel of A.
uniform sampler2D A;
out float result;

void main() {
    result = texRECT(A, WPOS);
}
