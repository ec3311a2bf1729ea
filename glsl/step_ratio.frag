// Line-search kernel (paper 000, Algorithm 3, (4.15)-(4.16)): the largest alpha in [0, 1]
// with x + alpha dx >= 0 is the minimum over i of these ratios, 1 where dx_i >= 0 and
// min(1, -x_i / dx_i) where dx_i < 0. A min reduction finishes the job.
uniform sampler2D X;
uniform sampler2D DX;
out float result;

void main() {
    float x = texRECT(X, WPOS);
    float dx = texRECT(DX, WPOS);
    result = dx < 0.0 ? min(1.0, max(0.0, -x / dx)) : 1.0;
}
