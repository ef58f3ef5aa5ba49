// One line: its copy for ocloc fits under test_full_disk_degrades_to_no_cache write limit.
kernel void tiny_scale(global float *a) { a[get_global_id(0)] *= 2.0f; }
