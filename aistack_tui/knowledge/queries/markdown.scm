(section (atx_heading heading_content: (inline) @name)) @def.heading
(section (setext_heading heading_content: (paragraph) @name)) @def.heading
