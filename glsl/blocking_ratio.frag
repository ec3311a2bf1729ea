// Line search with the blocking index (Mehrotra's step-length heuristic, Wright 1997 p. 205):
// the ratio -x_i / dx_i where dx_i < 0 and a huge value elsewhere, not capped at 1, so that an
// argmin reduction finds the component that blocks the step, and whether its ratio is <= 1.
uniform sampler2D X;
uniform sampler2D DX;
out float result;

void main() {
    float x = texRECT(X, WPOS);
    float dx = texRECT(DX, WPOS);
    result = dx < 0.0 ? max(0.0, -x / dx) : 3.0e38;
}
