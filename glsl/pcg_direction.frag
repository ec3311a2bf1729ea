// PCG's new direction p' = z + beta p (002 section 2.1, [9]) with z = P^-1 r put together on
// the way (beyond 002: no pass of its own): w off the pivoted entries (w is 0 at K) and the
// totals' z(K_c) at entry K_c (Slot: c there, -1 elsewhere); beta is texel k + 1 of the totals.
uniform sampler2D W;        // (w, r - phi, 0, 0): pcg_update_forward
uniform sampler2D Slot;
uniform sampler2D Z;        // pcg_chunk_totals
uniform sampler2D P;        // p
uniform int k;
out float result;

void main() {
    ivec2 t = ivec2(WPOS);
    float slot = texelFetch(Slot, t, 0).r;
    float z = texelFetch(W, t, 0).r + (slot >= 0.0 ? texelFetch(Z, ivec2(int(slot), 0), 0).r : 0.0);
    result = z + texelFetch(Z, ivec2(k + 1, 0), 0).r * texelFetch(P, t, 0).r;
}
