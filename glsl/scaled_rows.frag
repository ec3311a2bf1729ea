// FSATY by scattering (paper 002, section 3.1), the dense rows of A: x += y(i_r) a_r for every
// dense row r, in one pass drawn with additive blending over x. Row r is a plane of R folded
// like x, plane_rows texture rows down per plane.
uniform sampler2D R;        // the dense rows, plane r at rows r * plane_rows ..
uniform sampler2D I;        // 1 x kr: their row indexes i_r
uniform sampler2D Y;
uniform int kr;
uniform int plane_rows;
uniform int y_width;
out float result;

void main() {
    float sum = 0.0;
    for (int r = 0; r < kr; ++r) {
        float i = texRECT(I, vec2(r + 0.5, 0.5));
        sum += texRECT(R, WPOS + vec2(0.0, r * plane_rows)) * texVECTOR(Y, i, y_width);
    }
    result = sum;
}
