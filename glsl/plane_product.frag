// A dense column of A (a plane of the dense-column texture, `offset` rows down) times y,
// element by element: the first half of the inner product a_c^T y (paper 003, Fig. 1).
uniform sampler2D C;
uniform sampler2D Y;
uniform int offset;
out float result;

void main() {
    result = texRECT(C, WPOS + vec2(0.0, offset)) * texRECT(Y, WPOS);
}
